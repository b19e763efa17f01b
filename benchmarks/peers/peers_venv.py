"""The peers' virtualenv: Chroma, LanceDB and sentence-transformers, pinned in requirements.txt,
outside groundwire's dependencies.

torch (with the CUDA libraries its PyPI wheel depends on, ~4 GB) is not downloaded a second
time: the venv links the very torch build groundwire's interpreter uses, through a `.pth` file
naming a directory of symlinks, so both sides run MiniLM on the same torch. Everything else
comes from PyPI into the venv.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import sysconfig
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parent / "requirements.txt"
LINKED = ("torch", "torchgen", "functorch", "triton", "nvidia")
"""Top-level names (packages and their dist-info) linked from this interpreter's site-packages."""
DONE = "requirements.sha256"


def _linked_entries(site: Path) -> list[Path]:
    entries = []
    for entry in site.iterdir():
        base = entry.name.split("-", 1)[0].split(".", 1)[0]
        if base in LINKED or any(base.startswith(f"{name}_") for name in LINKED):
            entries.append(entry)
    return entries


def venv_python(venv: Path) -> Path:
    """The venv's interpreter."""
    return venv / "bin" / "python"


def ensure_venv(venv: Path) -> Path:
    """Create (or bring up to date with requirements.txt) the peers' venv; its interpreter."""
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    stamp = venv / DONE
    python = venv_python(venv)
    if stamp.is_file() and stamp.read_text().strip() == digest and python.is_file():
        return python
    if not python.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    shared = venv / "linked-torch"
    shared.mkdir(exist_ok=True)
    ours = Path(sysconfig.get_paths()["purelib"])
    for entry in _linked_entries(ours):
        link = shared / entry.name
        if not link.exists():
            link.symlink_to(entry)
    (site / "linked_torch.pth").write_text(str(shared) + "\n")
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-r",
            str(REQUIREMENTS),
        ],
        check=True,
    )
    stamp.write_text(digest + "\n")
    return python


if __name__ == "__main__":
    print(ensure_venv(Path(sys.argv[1])))
