#!/usr/bin/env bash
# Builds the Java client (code generated from ../../proto at build time) and runs its JUnit 5 suite
# against real groundwire servers that the tests start. Exits non-zero on any failure and prints
# Surefire's summary (the whole Maven log on failure).
#   GROUNDWIRE_PYTHON  interpreter that runs `-m server serve` (default <repo>/.venv/bin/python)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GROUNDWIRE_PYTHON="${GROUNDWIRE_PYTHON:-$root/.venv/bin/python}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cd "$here"
started=$(date +%s)
mvn -B --no-transfer-progress test >"$log" 2>&1
status=$?
if [ "$status" -ne 0 ]; then
  tail -n 400 "$log"
fi
grep -E "Tests run:|BUILD (SUCCESS|FAILURE)" "$log"
echo "clients/java/test.sh: mvn exited $status after $(( $(date +%s) - started )) s"
exit "$status"
