"""Every option of every `groundwire` command says what it does in --help."""

from __future__ import annotations

import argparse

import pytest

from server.cli import _parser

COMMANDS = ("serve", "index", "query", "answer", "keygen", "eval", "tune")


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_command_is_there() -> None:
    assert set(_subcommands()) == set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_has_help_text(command: str) -> None:
    parser = _subcommands()[command]
    undocumented = [
        a.option_strings or [a.dest]
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction) and not (a.help or "").strip()
    ]
    assert undocumented == []


def test_answer_takes_the_generation_and_retrieval_options() -> None:
    args = _parser().parse_args(
        ["answer", "q", "--top-k", "3", "--mode", "lexical", "--template", "code_qa",
         "--max-tokens", "64", "--temperature", "0.5", "--rewrite", "--json"]
    )  # fmt: skip
    assert (args.top_k, args.mode, args.template, args.max_tokens) == (3, "lexical", "code_qa", 64)
    assert (args.temperature, args.rewrite, args.json) == (0.5, True, True)
    defaults = _parser().parse_args(["answer", "q"])
    assert (defaults.top_k, defaults.mode, defaults.max_tokens, defaults.json) == (
        None, None, None, False,
    )  # fmt: skip
    assert _parser().parse_args(["query", "q"]).top_k == 5
