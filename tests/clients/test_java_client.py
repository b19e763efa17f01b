"""The Java client's JUnit suite (clients/java/test.sh), which starts real servers with this Python."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "clients" / "java" / "test.sh"


@pytest.mark.slow
def test_java_client_suite_passes_against_a_live_server() -> None:
    env = {**os.environ, "GROUNDWIRE_PYTHON": sys.executable}
    result = subprocess.run(
        ["bash", str(SCRIPT)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1800,
        check=False,
    )
    assert result.returncode == 0, (
        f"clients/java/test.sh exited {result.returncode}:\n{result.stdout}"
    )
