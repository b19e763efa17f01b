"""The TypeScript client's own suite (clients/typescript/test.sh): npm ci, build, node --test.

Its tests start real servers with this interpreter (GROUNDWIRE_PYTHON), so they run this checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST_SCRIPT = ROOT / "clients" / "typescript" / "test.sh"

pytestmark = pytest.mark.slow


def test_typescript_client_suite() -> None:
    env = {**os.environ, "GROUNDWIRE_PYTHON": sys.executable}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "clients" / "python"), env.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    result = subprocess.run(
        ["bash", str(TEST_SCRIPT)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1800,
        check=False,
    )
    assert result.returncode == 0, f"{TEST_SCRIPT} failed ({result.returncode}):\n{result.stdout}"
