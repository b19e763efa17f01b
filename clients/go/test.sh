#!/usr/bin/env bash
# Builds, vets and tests the Go client. The tests start a real groundwire server
# ($GROUNDWIRE_PYTHON -m server serve, default <repo>/.venv/bin/python) and stop it after.
# Self-contained: downloads the Go modules it needs through the module proxy. Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
export GROUNDWIRE_PYTHON=${GROUNDWIRE_PYTHON:-$root/.venv/bin/python}
go version
go mod download
go mod verify
go vet ./...
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting (gofmt -w):"
  echo "$unformatted"
  exit 1
fi
go test -count=1 -timeout 20m ./...
