"""The README example of clients/python runs as written against a live server, client-only."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.clients.conftest import KeyedServer

README = Path(__file__).parents[2] / "clients" / "python" / "README.md"
SERVER_SIDE = ("core", "server", "tests", "torch", "faiss", "tantivy", "sentence_transformers")
# Runs a script with every server-side package unimportable: the client must not need them.
CLIENT_ONLY = f"""
import runpy, sys

class ServerSide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {SERVER_SIDE!r}:
            raise ImportError(f"the client imported {{name}}")
        return None

sys.meta_path.insert(0, ServerSide())
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def example() -> str:
    """The first Python block after the "## Example" heading."""
    section = README.read_text("utf-8").split("## Example", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "no python block in the README example section"
    return match.group(1)


def test_readme_example_runs_as_written(keyed_server: KeyedServer, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(example(), "utf-8")
    env = {
        **os.environ,
        "GROUNDWIRE_TARGET": keyed_server.target,
        "GROUNDWIRE_API_KEY": keyed_server.api_key,
    }

    def run() -> list[str]:
        result = subprocess.run(
            [sys.executable, "-c", CLIENT_ONLY, str(script)],
            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()

    lines = run()
    assert lines[0] == "indexed: 3 new, 0 unchanged"
    assert lines[1].startswith("1. otters.md#0 (")
    assert lines[2].startswith("2. ")
    assert lines[-1] == "source: otters.md"
    assert "Sea otters hold hands while they sleep." in "\n".join(lines[3:-1])
    assert run()[0] == "indexed: 0 new, 3 unchanged"
