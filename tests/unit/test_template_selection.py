"""Tests for core.answer.template_selection."""

from __future__ import annotations

import pytest

from core.answer.template_selection import select_template
from core.errors import FieldViolation, InvalidArgument

INSTALLED = ("code_qa", "qa", "summarize")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        pytest.param([], "qa", id="no_chunks"),
        pytest.param([False, False], "qa", id="no_code"),
        pytest.param([True, False], "qa", id="exactly_half_is_not_more"),
        pytest.param([True, True, False, False], "qa", id="two_of_four"),
        pytest.param([True, True, False], "code_qa", id="two_of_three"),
        pytest.param([True], "code_qa", id="all_code"),
    ],
)
def test_automatic_choice(flags: list[bool], expected: str) -> None:
    assert select_template("", flags, INSTALLED) == expected


def test_code_template_only_when_installed() -> None:
    assert select_template("", [True, True], ("qa", "summarize")) == "qa"


@pytest.mark.parametrize("name", INSTALLED)
def test_explicit_request_wins(name: str) -> None:
    assert select_template(name, [True, True, True], INSTALLED) == name


def test_unknown_request_names_the_installed_set() -> None:
    with pytest.raises(InvalidArgument) as caught:
        select_template("poem", [False], set(INSTALLED))
    message = "unknown template 'poem'; installed: code_qa, qa, summarize"
    assert str(caught.value) == f"template: {message}"
    assert caught.value.violations == (FieldViolation("template", message),)
