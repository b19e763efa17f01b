"""The TypeScript, Go and Java clients' own suites, each run by its `clients/<language>/test.sh`.

Each script installs what its ecosystem needs (npm ci, Go modules, Maven artifacts), builds, and
runs its tests against real servers that the tests start with this interpreter
(GROUNDWIRE_PYTHON) and this checkout on PYTHONPATH. A missing toolchain fails, never skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SUITES = {
    "typescript": ("node", "Node 20 or newer with npm"),
    "go": ("go", "Go 1.26 or newer"),
    "java": ("mvn", "Java 17 or newer with Maven"),
}


@pytest.mark.slow
@pytest.mark.parametrize("language", list(SUITES))
def test_client_suite_passes_against_a_live_server(language: str) -> None:
    tool, toolchain = SUITES[language]
    if shutil.which(tool) is None:
        pytest.fail(f"the {language} client's tests need {toolchain} ({tool!r} on PATH)")
    env = {**os.environ, "GROUNDWIRE_PYTHON": sys.executable}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "clients" / "python"), env.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    script = ROOT / "clients" / language / "test.sh"
    result = subprocess.run(
        ["bash", str(script)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1800,
        check=False,
    )
    assert result.returncode == 0, f"{script} exited {result.returncode}:\n{result.stdout}"
