#!/usr/bin/env bash
# Builds the Java client (code generated from ../../proto at build time) and runs its JUnit 5 suite
# against real groundwire servers that the tests start. Exits non-zero on any failure and prints
# Surefire's summary (the whole Maven log on failure).
#   GROUNDWIRE_PYTHON  interpreter that runs `-m server serve` (default <repo>/.venv/bin/python)
#   GRPC_JAVA_PLUGIN   the grpc-java protoc plugin (default /usr/bin/grpc_java_plugin, from Debian's
#                      protobuf-compiler-grpc-java-plugin, installed here when missing and root)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GROUNDWIRE_PYTHON="${GROUNDWIRE_PYTHON:-$root/.venv/bin/python}"
plugin="${GRPC_JAVA_PLUGIN:-/usr/bin/grpc_java_plugin}"

if [ ! -x "$plugin" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing protobuf-compiler-grpc-java-plugin (Debian) for $plugin"
  apt-get install -y -qq protobuf-compiler-grpc-java-plugin >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq protobuf-compiler-grpc-java-plugin >/dev/null; }
fi
if [ ! -x "$plugin" ]; then
  echo "error: no grpc-java protoc plugin at $plugin;" \
    "run 'apt-get install protobuf-compiler-grpc-java-plugin' or set GRPC_JAVA_PLUGIN" >&2
  exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cd "$here"
started=$(date +%s)
mvn -B --no-transfer-progress -Dgrpc.java.plugin="$plugin" test >"$log" 2>&1
status=$?
if [ "$status" -ne 0 ]; then
  tail -n 400 "$log"
fi
grep -E "Tests run:|BUILD (SUCCESS|FAILURE)" "$log"
echo "clients/java/test.sh: mvn exited $status after $(( $(date +%s) - started )) s"
exit "$status"
