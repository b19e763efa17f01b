#!/usr/bin/env bash
# Regenerates the Go code of proto/groundwire/v1 into clients/go/gen/groundwire/v1 (checked in).
# Pinned generators: protoc from grpcio-tools (version in pyproject.toml; the python is
# $GROUNDWIRE_PYTHON, else $PYTHON, else <repo>/.venv/bin/python), protoc-gen-go and
# protoc-gen-go-grpc installed through the Go module proxy into <repo>/.tools/go/bin.
# Runnable from anywhere; the output depends only on the protos and these versions.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.1
MODULE=github.com/groundwire/groundwire/clients/go
GO_PACKAGE="$MODULE/gen/groundwire/v1;groundwirev1"

py=${GROUNDWIRE_PYTHON:-${PYTHON:-$root/.venv/bin/python}}
"$py" -c 'import grpc_tools.protoc' || { echo "generate.sh: $py has no grpcio-tools (set GROUNDWIRE_PYTHON)" >&2; exit 1; }
bin="$root/.tools/go/bin"
mkdir -p "$bin"
if [ "$("$bin/protoc-gen-go" --version 2>/dev/null)" != "protoc-gen-go $PROTOC_GEN_GO_VERSION" ]; then
  (cd clients/go && GOBIN="$bin" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION")
fi
if [ "$("$bin/protoc-gen-go-grpc" --version 2>/dev/null)" != "protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC_VERSION#v}" ]; then
  (cd clients/go && GOBIN="$bin" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION")
fi

# The protos set no go_package: map each file to the Go package with M flags instead.
protos=(proto/groundwire/v1/*.proto)
mapping=()
for proto in "${protos[@]}"; do
  mapping+=("--go_opt=M${proto#proto/}=$GO_PACKAGE" "--go-grpc_opt=M${proto#proto/}=$GO_PACKAGE")
done

out=clients/go/gen/groundwire/v1
rm -f "$out"/*.pb.go
mkdir -p "$out"
"$py" -m grpc_tools.protoc -Iproto \
  --plugin=protoc-gen-go="$bin/protoc-gen-go" --plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" \
  --go_out=clients/go --go_opt=module="$MODULE" \
  --go-grpc_out=clients/go --go-grpc_opt=module="$MODULE" \
  "${mapping[@]}" "${protos[@]}"
echo "generated: $(ls "$out"/*.pb.go | wc -l) go files in $out"
