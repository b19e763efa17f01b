"""The Go client's own test suite (clients/go/test.sh: vet and `go test` against a live server)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "clients" / "go" / "test.sh"


@pytest.mark.slow
def test_go_client() -> None:
    if shutil.which("go") is None:
        pytest.fail("the Go client's tests need the Go toolchain (go 1.26 or newer) on PATH")
    env = {**os.environ, "GROUNDWIRE_PYTHON": sys.executable}
    result = subprocess.run(
        [str(SCRIPT)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"clients/go/test.sh exited with {result.returncode}:\n{result.stdout}")
