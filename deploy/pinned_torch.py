"""Print pyproject.toml's torch requirement (e.g. ``torch==2.15.0``), for the image builds.

The CPU image installs that version from PyTorch's CPU wheel index before the project, so pip
keeps it (``2.15.0+cpu`` satisfies ``==2.15.0``) instead of pulling PyPI's CUDA build. Run from the
directory holding pyproject.toml.
"""

import sys
import tomllib
from pathlib import Path


def torch_requirement(pyproject: Path) -> str:
    """The single ``torch==X`` entry of the project's dependencies."""
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    pins = [d for d in dependencies if d.replace(" ", "").startswith("torch==")]
    if len(pins) != 1:
        raise SystemExit(f"{pyproject}: expected one torch== pin, found {pins}")
    return str(pins[0])


if __name__ == "__main__":
    print(torch_requirement(Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml")))
