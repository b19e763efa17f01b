"""Prompt templates: loaded once from a prompts directory, validated, rendered per request.

Syntax (see prompts/README.md): `<!-- INCLUDE: path -->` is replaced by the named file, relative
to the including file and never outside the prompts root; other HTML comments are notes for
maintainers and are removed; `{{ query }}` and `{{ context }}` each appear exactly once per
template after expansion. Trailing whitespace is removed so a prompt ends on its cue ("Answer:").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from core.errors import InvalidArgument

__all__ = ["REQUIRED_TEMPLATES", "PromptLibrary", "default_prompts_dir", "unknown_template"]

REQUIRED_TEMPLATES = ("qa",)
"""Templates every prompts directory must provide (the default selection falls back to "qa")."""

_INCLUDE = re.compile(r"<!--\s*INCLUDE:(.*?)-->", re.DOTALL)
_WHOLE_LINE_COMMENT = re.compile(r"^[ \t]*<!--.*?-->[ \t]*\n", re.DOTALL | re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_MARKERS = ("context", "query")


def default_prompts_dir() -> Path:
    """The `prompts/` directory at the repository root."""
    return Path(__file__).resolve().parents[2] / "prompts"


def unknown_template(name: str, installed: Iterable[str]) -> InvalidArgument:
    """The error for a template name that is not installed."""
    listed = ", ".join(sorted(installed))
    return InvalidArgument.field("template", f"unknown template '{name}'; installed: {listed}")


class _Expander:
    """Expands includes below one prompts root, detecting cycles and escapes."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def relative(self, path: Path) -> str:
        return path.relative_to(self._root).as_posix()

    def expand(self, path: Path, chain: tuple[Path, ...] = ()) -> str:
        """The text of `path` (resolved, inside the root) with every include expanded."""
        if path in chain:
            cycle = " -> ".join(self.relative(step) for step in (*chain, path))
            raise InvalidArgument(f"include cycle: {cycle}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise InvalidArgument(f"{self.relative(path)}: not valid UTF-8 ({error})") from None
        return _INCLUDE.sub(lambda match: self._include(path, match, (*chain, path)), text)

    def _include(self, including: Path, match: re.Match[str], chain: tuple[Path, ...]) -> str:
        where = self.relative(including)
        target = match.group(1).strip()
        if not target:
            raise InvalidArgument(f"{where}: include directive names no file")
        if Path(target).is_absolute():
            raise InvalidArgument(
                f"{where}: include '{target}' is an absolute path; "
                "use a path relative to the including file"
            )
        resolved = (including.parent / target).resolve()
        if not resolved.is_relative_to(self._root):
            raise InvalidArgument(
                f"{where}: include '{target}' resolves outside the prompts directory"
            )
        if not resolved.is_file():
            raise InvalidArgument(
                f"{where}: included file '{target}' not found ({self.relative(resolved)})"
            )
        return self.expand(resolved, chain).rstrip("\n")


def _strip_comments(text: str) -> str:
    return _COMMENT.sub("", _WHOLE_LINE_COMMENT.sub("", text))


def _validate_markers(name: str, text: str) -> None:
    found = [match.group(1) for match in _PLACEHOLDER.finditer(text)]
    for placeholder in found:
        if placeholder not in _MARKERS:
            raise InvalidArgument(
                f"{name}: unknown placeholder '{{{{ {placeholder} }}}}'; "
                "only {{ query }} and {{ context }} are supported"
            )
    for marker in _MARKERS:
        count = found.count(marker)
        if count != 1:
            raise InvalidArgument(
                f"{name}: expected exactly one {{{{ {marker} }}}} marker after includes, "
                f"found {count}"
            )


class PromptLibrary:
    """The installed templates by name; immutable after `load`."""

    def __init__(self, templates: Mapping[str, str]) -> None:
        """`templates`: name -> expanded text; use `load` to read and validate a directory."""
        self._templates = dict(templates)

    @classmethod
    def load(cls, root: Path) -> PromptLibrary:
        """Every `rag/*.md` under `root` as a template named by its stem, expanded and validated.

        Raises InvalidArgument naming the file at fault: a missing, absolute or escaping include,
        an include cycle, missing or repeated markers, an unknown placeholder, or no `qa` template.
        """
        resolved_root = root.resolve()
        rag = resolved_root / "rag"
        if not rag.is_dir():
            raise InvalidArgument(f"prompts directory {root} has no rag/ folder of templates")
        expander = _Expander(resolved_root)
        templates: dict[str, str] = {}
        for path in sorted(rag.glob("*.md")):
            resolved = path.resolve()
            name = f"rag/{path.name}"
            if not resolved.is_relative_to(resolved_root):
                raise InvalidArgument(f"{name}: resolves outside the prompts directory")
            text = _strip_comments(expander.expand(resolved)).strip() + "\n"
            _validate_markers(name, text)
            templates[path.stem] = text.rstrip()
        for required in REQUIRED_TEMPLATES:
            if required not in templates:
                raise InvalidArgument(
                    f"prompts directory {root} has no rag/{required}.md; "
                    f"the '{required}' template is required"
                )
        return cls(templates)

    def names(self) -> tuple[str, ...]:
        """Installed template names, sorted."""
        return tuple(sorted(self._templates))

    def render(self, name: str, query: str, context: str) -> str:
        """Template `name` with the query and context substituted literally (braces untouched)."""
        template = self._templates.get(name)
        if template is None:
            raise unknown_template(name, self._templates)
        values = {"query": query, "context": context}
        return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)
