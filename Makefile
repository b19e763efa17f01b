# The two commands of the README: `make serve` and `make test`. Both set up everything they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BUF_VERSION := 1.75.0
BUF := .tools/node_modules/.bin/buf

.PHONY: serve test check lint codegen-check buf install

serve: install
	$(BIN)/groundwire serve

test: install
	$(BIN)/pytest

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

$(BUF):
	npm install --silent --no-audit --no-fund --prefix .tools @bufbuild/buf@$(BUF_VERSION)

buf: $(BUF)

# Lint and generated-code checks, run by CI before the tests.
check: install buf lint codegen-check

lint:
	cd proto && ../$(BUF) lint
	@if git rev-parse -q --verify HEAD~1 >/dev/null && git cat-file -e HEAD~1:proto/buf.yaml 2>/dev/null; then \
		cd proto && ../$(BUF) breaking --against '../.git#ref=HEAD~1,subdir=proto'; \
	else echo "buf breaking: no previous commit with proto/ to compare against; skipped"; fi
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

codegen-check:
	PYTHON=$(BIN)/python proto/generate.sh
	@git add -N clients/python/groundwire/v1 && git diff --exit-code --stat -- clients/python/groundwire/v1 \
		|| (echo "generated code is stale: run proto/generate.sh and commit the result" && exit 1)
