"""`groundwire keygen` and the TOML it writes: hostile ids and tenants never reach the keys file."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InvalidArgument
from server.api_keys import KeyRing
from server.commands.keygen_command import run_keygen
from server.principal import Principal, Role
from server.toml_strings import toml_basic_string

HOSTILE = {
    "quote-newline-injection": 'x"\ntenant = "globex"\nrole = "admin"\nsha256 = "'
    + "a" * 64
    + '"\n#',
    "new-table": 'x"\n[[keys]]\nid = "evil',
    "double-bracket": "]]",
    "backslash": "a\\b",
    "unicode": "clé-ü",
    "nul": "a\x00b",
    "escape-char": "a\x1b[31mred",
    "del": "a\x7f",
    "carriage-return": "a\rb",
    "path-like": "../Bad Tenant",
    "space": "two words",
    "empty": "",
    "too-long": "a" * 64,
}


def _keygen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", "keygen", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )


@pytest.mark.parametrize("value", list(HOSTILE.values()), ids=list(HOSTILE))
def test_toml_basic_strings_read_back_unchanged(value: str) -> None:
    assert tomllib.loads(f"v = {toml_basic_string(value)}\n") == {"v": value}


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"])))
def test_any_text_reads_back_unchanged(value: str) -> None:
    text = f"v = {toml_basic_string(value)}\n"
    assert "\n" not in text[:-1]
    assert tomllib.loads(text) == {"v": value}


def test_surrogates_are_refused_not_written() -> None:
    with pytest.raises(ValueError, match="surrogate U\\+DC80, which TOML cannot represent"):
        toml_basic_string("a\udc80")


ARGV_HOSTILE = {name: value for name, value in HOSTILE.items() if "\x00" not in value}
ID_RULE = (
    "is not valid; use 1-63 characters of A-Z, a-z, 0-9, '.', '_' and '-', "
    "starting with a letter or digit"
)


def _run_keygen(
    capsys: pytest.CaptureFixture[str], tenant: str, role: str, key_id: str
) -> tuple[int, str, str]:
    """run_keygen in this process: (exit status, stdout, stderr)."""
    try:
        run_keygen(tenant, role, key_id)
        status = 0
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("value", list(HOSTILE.values()), ids=list(HOSTILE))
def test_keygen_refuses_a_hostile_id_and_prints_no_entry(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    status, out, err = _run_keygen(capsys, "acme", "reader", value)
    assert (status, out) == (2, "")
    shown = repr(value[:80] + ("..." if len(value) > 80 else ""))
    assert err == f"groundwire keygen: error: --id {shown} {ID_RULE}\n"


@pytest.mark.parametrize(
    "value",
    ["../Bad Tenant", "Acme", 'acme"\nrole = "admin', "acme]]", "acmé", "a\tb", "", "a" * 64],
    ids=["path", "upper-case", "injection", "brackets", "unicode", "tab", "empty", "too-long"],
)
def test_keygen_refuses_a_hostile_tenant_and_prints_no_entry(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    status, out, err = _run_keygen(capsys, value, "writer", "job")
    assert (status, out) == (2, "")
    assert err == (
        f"groundwire keygen: error: --tenant {value!r} is not valid; "
        "use 1-63 characters of a-z, 0-9, '_' and '-'\n"
    )


def test_keygen_refuses_an_unknown_role(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_keygen(capsys, "acme", "owner", "job") == (
        2,
        "",
        "groundwire keygen: error: --role 'owner' is not valid; use reader, writer or admin\n",
    )


def test_the_keygen_command_refuses_an_injected_id(tmp_path: Path) -> None:
    """The real command line: exit status 2, nothing on stdout, the fix on stderr."""
    done = _keygen(
        "--tenant", "acme", "--role", "reader", "--id", HOSTILE["quote-newline-injection"]
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines()[-1].startswith("groundwire keygen: error: --id 'x\"\\ntenant")
    assert done.stderr.splitlines()[-1].endswith(ID_RULE)


def test_keygen_entry_loads_as_exactly_the_key_asked_for(tmp_path: Path) -> None:
    done = _keygen("--tenant", "acme", "--role", "writer", "--id", "Ingest.job_2")
    assert done.returncode == 0, done.stderr
    key = done.stderr.strip().splitlines()[-1]  # after the notice "API key for ... (shown once...)"
    assert key.startswith("gw_") and key not in done.stdout
    path = tmp_path / "keys.toml"
    path.write_text(done.stdout, "utf-8")
    ring = KeyRing.load(path)
    assert len(ring) == 1
    assert ring.authenticate(key) == Principal("acme", Role.WRITER, "Ingest.job_2")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            'id = "a\\nb"',
            "keys[0] id 'a\\nb' is not valid; use 1-63 characters of A-Z, a-z, 0-9, '.', '_' "
            "and '-', starting with a letter or digit",
        ),
        ('id = "x\\"y"', "keys[0] id 'x\"y' is not valid; use 1-63 characters"),
        ("id = 7", "keys[0] id must be a string (a quoted TOML value)"),
        ("tenant = 7", "keys[0] tenant must be a string (a quoted TOML value)"),
    ],
    ids=["newline-id", "quote-id", "integer-id", "integer-tenant"],
)
def test_the_loader_applies_the_same_rules(tmp_path: Path, line: str, message: str) -> None:
    fields = {"id": '"k"', "tenant": '"acme"', "role": '"reader"', "sha256": '"' + "b" * 64 + '"'}
    name = line.split(" = ")[0]
    fields[name] = line.split(" = ", 1)[1]
    path = tmp_path / "keys.toml"
    path.write_text("[[keys]]\n" + "".join(f"{k} = {v}\n" for k, v in fields.items()), "utf-8")
    with pytest.raises(InvalidArgument) as caught:
        KeyRing.load(path)
    assert str(caught.value).startswith(f"auth.keys_file: {path} {message}")
