#!/usr/bin/env bash
# Regenerates src/generated/ from proto/groundwire/v1 (plus google.rpc status details and the gRPC
# health protocol) with the pinned local ts-proto plugin (package.json) and protoc from the pinned
# grpcio-tools. Runnable from anywhere; deterministic (CI regenerates and fails on a diff).
# PYTHON: an interpreter with grpcio-tools and googleapis-common-protos (default: <repo>/.venv).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${PYTHON:-$root/.venv/bin/python}
plugin="$here/node_modules/.bin/protoc-gen-ts_proto"
if [ ! -x "$plugin" ]; then
  (cd "$here" && npm ci --silent --no-audit --no-fund)
fi
site=$("$py" -c 'import os, google.rpc; print(os.path.dirname(os.path.dirname(list(google.rpc.__path__)[0])))')
tools=$("$py" -c 'import os, grpc_tools; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')
out="$here/src/generated"
rm -rf "$out"
mkdir -p "$out"
cd "$root"
"$py" -m grpc_tools.protoc \
  --plugin=protoc-gen-ts_proto="$plugin" \
  --ts_proto_out="$out" \
  --ts_proto_opt=outputServices=grpc-js,env=node,esModuleInterop=true,forceLong=number \
  --ts_proto_opt=useDate=false,useExactTypes=false \
  -Iproto -I"$here/proto" -I"$site" -I"$tools" \
  proto/groundwire/v1/*.proto \
  "$here/proto/grpc/health/v1/health.proto" \
  "$site/google/rpc/status.proto" "$site/google/rpc/error_details.proto"
echo "generated: $(find "$out" -name '*.ts' | wc -l) TypeScript modules in ${out#"$root"/}"
