"""Key files, hashing, authentication of metadata, and the auth/TLS settings checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InvalidArgument, PermissionDenied, Unauthenticated
from server.api_keys import KeyRing, hash_key, new_key
from server.authentication import Authenticator
from server.principal import LOCAL_ADMIN, Principal, Role
from server.settings import load_settings


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "keys.toml"
    path.write_text(text, "utf-8")
    return path


def _entry(key: str, tenant: str = "acme", role: str = "writer", key_id: str = "k1") -> str:
    return f'[[keys]]\nid = "{key_id}"\ntenant = "{tenant}"\nrole = "{role}"\nsha256 = "{hash_key(key)}"\n'


def test_new_keys_are_random_and_only_their_hash_is_stored(tmp_path: Path) -> None:
    key = new_key()
    assert key.startswith("gw_") and len(key) > 40 and key != new_key()
    path = _write(tmp_path, _entry(key))
    assert key not in path.read_text("utf-8")
    ring = KeyRing.load(path)
    assert ring.authenticate(key) == Principal("acme", Role.WRITER, "k1")
    assert ring.authenticate(key + "x") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "keys file {path} has no [[keys]] entries; add one with `groundwire keygen`"),
        (
            '[[keys]]\ntenant = "Acme!"\nrole = "reader"\nsha256 = "' + "a" * 64 + '"\n',
            "{path} keys[0] tenant 'Acme!' is not valid; use 1-63 characters of a-z, 0-9, '_' and '-'",
        ),
        (
            '[[keys]]\ntenant = "acme"\nrole = "owner"\nsha256 = "' + "a" * 64 + '"\n',
            "{path} keys[0] role 'owner' is not valid; use reader, writer or admin",
        ),
        (
            '[[keys]]\ntenant = "acme"\nrole = "reader"\nsha256 = "gw_plaintext"\n',
            "{path} keys[0] sha256 must be 64 hex digits (the SHA-256 of the key, never the key itself)",
        ),
        (
            '[[keys]]\ntenant = "acme"\nrole = "reader"\nkey = "x"\nsha256 = "' + "a" * 64 + '"\n',
            "{path} keys[0] field 'key' is unknown; use id, tenant, role, sha256",
        ),
    ],
    ids=["empty", "bad-tenant", "bad-role", "plaintext-key", "unknown-field"],
)
def test_bad_key_files_name_the_entry_and_the_fix(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(InvalidArgument) as caught:
        KeyRing.load(path)
    assert str(caught.value) == "auth.keys_file: " + message.format(path=path)


def test_duplicate_keys_are_rejected(tmp_path: Path) -> None:
    key = new_key()
    path = _write(tmp_path, _entry(key, key_id="a") + _entry(key, tenant="globex", key_id="b"))
    with pytest.raises(InvalidArgument, match="keys 'a' and 'b' have the same hash"):
        KeyRing.load(path)


def test_authenticator_reads_bearer_metadata(tmp_path: Path) -> None:
    key = new_key()
    auth = Authenticator(KeyRing.load(_write(tmp_path, _entry(key, role="reader"))))
    assert auth.authenticate([("authorization", f"Bearer {key}")]).tenant == "acme"
    assert auth.authenticate([("authorization", f"bearer  {key} ")]).role is Role.READER
    with pytest.raises(Unauthenticated, match="send exactly one 'authorization' metadata entry"):
        auth.authenticate([("authorization", f"Bearer {key}")] * 2)
    with pytest.raises(Unauthenticated, match="missing credentials"):
        auth.authenticate([("x-request-id", "r1")])
    assert Authenticator(None).authenticate(None) is LOCAL_ADMIN


def test_roles_are_ordered() -> None:
    writer = Principal("acme", Role.WRITER, "w")
    writer.require(Role.READER, "Retrieve")
    writer.require(Role.WRITER, "UpsertDocuments")
    with pytest.raises(PermissionDenied) as caught:
        writer.require(Role.ADMIN, "CompactCollection")
    assert str(caught.value) == (
        "CompactCollection requires the admin role; the key 'w' has the writer role. "
        "Use a key with the admin role"
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"GROUNDWIRE_SERVER__TLS_CERT_FILE": "server.crt"},
            "server.tls_cert_file: set both server.tls_cert_file and server.tls_key_file, or neither",
        ),
        (
            {"GROUNDWIRE_SERVER__TLS_CLIENT_CA_FILE": "ca.crt"},
            "server.tls_client_ca_file: mutual TLS needs server TLS: set server.tls_cert_file "
            "and server.tls_key_file too",
        ),
        (
            {"GROUNDWIRE_AUTH__REQUIRED": "true"},
            "auth.keys_file: is required because auth.required is true; create one with "
            "`groundwire keygen`",
        ),
        (
            {"GROUNDWIRE_LIMITS__MAX_COLLECTIONS_PER_TENANT": "0"},
            "limits.max_collections_per_tenant: must be >= 1",
        ),
    ],
    ids=["cert-without-key", "ca-without-tls", "auth-required", "zero-collections"],
)
def test_auth_and_tls_settings_are_validated(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        load_settings(env=env)
    assert str(caught.value) == message
