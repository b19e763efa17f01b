#!/usr/bin/env bash
# The one way generated code is made. Pinned generator: grpcio-tools (version in pyproject.toml).
# Python stubs land in clients/python/groundwire/v1 (importable as `groundwire.v1`), the single
# place both the server and the Python client (groundwire-client, clients/python) import them from.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=${PYTHON:-python3}
out=clients/python
rm -f "$out"/groundwire/v1/*_pb2*.py "$out"/groundwire/v1/*_pb2*.pyi
mkdir -p "$out/groundwire/v1"
"$py" -m grpc_tools.protoc -Iproto \
  --python_out="$out" --pyi_out="$out" --grpc_python_out="$out" \
  proto/groundwire/v1/*.proto
touch "$out/groundwire/v1/__init__.py"
echo "generated: $(ls "$out"/groundwire/v1/*_pb2*.py | wc -l) python modules"
