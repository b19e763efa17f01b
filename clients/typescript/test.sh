#!/usr/bin/env bash
# Installs (npm ci), builds and tests the TypeScript client against real groundwire servers.
# GROUNDWIRE_PYTHON: the Python that runs the server (default: <repo>/.venv/bin/python).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
rm -rf dist
npx --no-install tsc -p tsconfig.json
node --test --test-concurrency=2 dist/test/*.test.js
