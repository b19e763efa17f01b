# The two commands of the README: `make serve` and `make test`. Each sets up what it needs:
# `serve` installs the server only (`-e .`); `test` and `check` add the `test` extra (pytest,
# linters, codegen, and llama-cpp-python, which compiles llama.cpp on a fresh machine).
# One stamp per install, so each knows what its venv has.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BUF_VERSION := 1.75.0
BUF := .tools/node_modules/.bin/buf

.PHONY: serve test check lint codegen-check buf install install-test

serve: install
	$(BIN)/groundwire serve

test: install-test
	$(BIN)/pytest

install: $(VENV)/.installed-serve

install-test: $(VENV)/.installed-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip

$(VENV)/.installed-serve: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# The test extra includes everything serving needs, so it satisfies `serve` too.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed-serve

$(BUF):
	npm install --silent --no-audit --no-fund --prefix .tools @bufbuild/buf@$(BUF_VERSION)

buf: $(BUF)

# Lint and generated-code checks, run by CI before the tests.
check: install-test buf lint codegen-check

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
