"""Which prompt template answers a request: the one it names, else chosen by its chunks."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from core.answer.prompts import unknown_template

__all__ = ["CODE_TEMPLATE", "DEFAULT_TEMPLATE", "select_template"]

DEFAULT_TEMPLATE = "qa"
CODE_TEMPLATE = "code_qa"


def select_template(
    requested: str, has_code_flags: Sequence[bool], library_names: Collection[str]
) -> str:
    """`requested` when non-empty (it must be installed); else "code_qa" when more than half of
    the selected chunks contain code and that template is installed; else "qa".

    Raises InvalidArgument (field "template") for a requested name that is not installed.
    """
    if requested:
        if requested not in library_names:
            raise unknown_template(requested, library_names)
        return requested
    code_chunks = sum(1 for flag in has_code_flags if flag)
    if code_chunks * 2 > len(has_code_flags) and CODE_TEMPLATE in library_names:
        return CODE_TEMPLATE
    return DEFAULT_TEMPLATE
