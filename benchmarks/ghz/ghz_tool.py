"""A pinned ghz, installed through the Go module proxy into a cache directory, and its HTML printer.

`go install github.com/bojand/ghz/cmd/ghz@GHZ_VERSION` with GOBIN under the cache; the
`htmlreport/` module next to this file (same ghz version) renders a JSON report as ghz's HTML
report, so one run gives both formats.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GHZ_MODULE = "github.com/bojand/ghz"
GHZ_VERSION = "v0.120.0"
HTML_REPORT_SOURCE = Path(__file__).resolve().parent / "htmlreport"


def _go_env(gobin: Path) -> dict[str, str]:
    return {**os.environ, "GOBIN": str(gobin), "GOFLAGS": "-buildvcs=false"}


def ensure_ghz(cache: Path) -> Path:
    """The ghz binary of GHZ_VERSION under `cache`, installed first if missing."""
    gobin = cache / "ghz-bin" / GHZ_VERSION
    binary = gobin / "ghz"
    if not binary.is_file():
        gobin.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["go", "install", f"{GHZ_MODULE}/cmd/ghz@{GHZ_VERSION}"],
            env=_go_env(gobin),
            check=True,
        )
    return binary


def ensure_html_report(cache: Path) -> Path:
    """The JSON-to-HTML converter built from `htmlreport/` (rebuilt when its source is newer)."""
    binary = cache / "ghz-bin" / GHZ_VERSION / "htmlreport"
    newest = max(p.stat().st_mtime for p in HTML_REPORT_SOURCE.iterdir())
    if not binary.is_file() or binary.stat().st_mtime < newest:
        binary.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["go", "build", "-o", str(binary), "."],
            cwd=HTML_REPORT_SOURCE,
            env=_go_env(binary.parent),
            check=True,
        )
    return binary


def go_version() -> str:
    """`go version` output."""
    return subprocess.run(
        ["go", "version"], capture_output=True, text=True, check=True
    ).stdout.strip()
