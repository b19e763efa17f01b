"""Tests for core.answer.prompts: the installed templates, include expansion and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.answer.prompts import PromptLibrary, default_prompts_dir
from core.errors import FieldViolation, InvalidArgument

BODY = "Sources:\n{{ context }}\nQuestion: {{ query }}\nAnswer:\n"


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def load_error(root: Path) -> str:
    with pytest.raises(InvalidArgument) as caught:
        PromptLibrary.load(root)
    return str(caught.value)


# --- the real prompts directory -------------------------------------------------------------


@pytest.fixture(scope="module")
def library() -> PromptLibrary:
    return PromptLibrary.load(default_prompts_dir())


def test_installed_templates(library: PromptLibrary) -> None:
    assert library.names() == ("code_qa", "qa", "summarize")


@pytest.mark.parametrize("name", ["code_qa", "qa", "summarize"])
def test_real_templates_render_completion_style(library: PromptLibrary, name: str) -> None:
    context = "[DOC:guide | CHUNK:guide#0]\nInstall with pip."
    prompt = library.render(name, "How do I install it?", context)
    assert prompt.endswith("Summary:" if name == "summarize" else "Answer:")
    assert "INCLUDE" not in prompt and "<!--" not in prompt and "{{" not in prompt
    assert prompt.count(context) == 1 and prompt.count("How do I install it?") == 1
    assert "[DOC:<document id> | CHUNK:<chunk id>]" in prompt  # the exact tag format
    assert prompt.index("Rules:") < prompt.index(context) < prompt.index("How do I install it?")


def test_render_keeps_braces_in_query_and_context_literal(library: PromptLibrary) -> None:
    prompt = library.render("qa", "what is {{ context }} and {{ query }}?", "ctx {{ query }}")
    assert "Question: what is {{ context }} and {{ query }}?" in prompt
    assert "\nctx {{ query }}\n" in prompt


def test_unknown_template(library: PromptLibrary) -> None:
    with pytest.raises(InvalidArgument) as caught:
        library.render("x", "q", "c")
    message = "unknown template 'x'; installed: code_qa, qa, summarize"
    assert str(caught.value) == f"template: {message}"
    assert caught.value.violations == (FieldViolation("template", message),)


# --- expansion ------------------------------------------------------------------------------


def test_nested_includes_and_comments(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "rag/qa.md": "<!-- a note -->\nIntro.\n<!-- INCLUDE: ../common/rules.md -->\n" + BODY,
            "common/rules.md": "Rule one.\n<!-- INCLUDE: more/extra.md -->\n\n",
            "common/more/extra.md": "Rule two. <!-- inline note -->\n",
        },
    )
    rendered = PromptLibrary.load(root).render("qa", "Q?", "C")
    assert rendered == "Intro.\nRule one.\nRule two. \nSources:\nC\nQuestion: Q?\nAnswer:"


def test_same_file_included_twice_is_not_a_cycle(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "rag/qa.md": "<!-- INCLUDE: ../common/r.md -->\n<!-- INCLUDE: ../common/r.md -->\n"
            + BODY,
            "common/r.md": "R.",
        },
    )
    assert PromptLibrary.load(root).render("qa", "q", "c").startswith("R.\nR.\nSources:")


def test_custom_directory_adds_templates(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"rag/qa.md": BODY, "rag/brief.md": BODY, "rag/notes.txt": ""})
    assert PromptLibrary.load(root).names() == ("brief", "qa")


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "message"),
    [
        pytest.param(
            {"rag/qa.md": "<!-- INCLUDE: ../../etc/passwd -->\n" + BODY},
            "rag/qa.md: include '../../etc/passwd' resolves outside the prompts directory",
            id="escape_etc_passwd",
        ),
        pytest.param(
            {
                "rag/qa.md": "<!-- INCLUDE: ../common/a.md -->\n" + BODY,
                "common/a.md": "<!-- INCLUDE: ../../x.md -->",
            },
            "common/a.md: include '../../x.md' resolves outside the prompts directory",
            id="escape_from_nested_include",
        ),
        pytest.param(
            {"rag/qa.md": "<!-- INCLUDE: /etc/passwd -->\n" + BODY},
            "rag/qa.md: include '/etc/passwd' is an absolute path; use a path relative to the including file",
            id="absolute",
        ),
        pytest.param(
            {"rag/qa.md": "<!-- INCLUDE: ../common/nope.md -->\n" + BODY},
            "rag/qa.md: included file '../common/nope.md' not found (common/nope.md)",
            id="missing",
        ),
        pytest.param(
            {"rag/qa.md": "<!-- INCLUDE: -->\n" + BODY},
            "rag/qa.md: include directive names no file",
            id="empty_include",
        ),
        pytest.param(
            {
                "rag/qa.md": "<!-- INCLUDE: ../common/a.md -->\n" + BODY,
                "common/a.md": "<!-- INCLUDE: b.md -->",
                "common/b.md": "<!-- INCLUDE: ../rag/qa.md -->",
            },
            "include cycle: rag/qa.md -> common/a.md -> common/b.md -> rag/qa.md",
            id="cycle",
        ),
        pytest.param(
            {"rag/qa.md": "<!-- INCLUDE: qa.md -->\n" + BODY},
            "include cycle: rag/qa.md -> rag/qa.md",
            id="self_include",
        ),
        pytest.param(
            {"rag/qa.md": "Question: {{ query }}\nAnswer:"},
            "rag/qa.md: expected exactly one {{ context }} marker after includes, found 0",
            id="no_context",
        ),
        pytest.param(
            {"rag/qa.md": "<!-- INCLUDE: ../common/q.md -->\n" + BODY, "common/q.md": "{{query}}"},
            "rag/qa.md: expected exactly one {{ query }} marker after includes, found 2",
            id="duplicate_query_via_include",
        ),
        pytest.param(
            {"rag/qa.md": "{{ history }}\n" + BODY},
            "rag/qa.md: unknown placeholder '{{ history }}'; only {{ query }} and {{ context }} are supported",
            id="unknown_placeholder",
        ),
        pytest.param(
            {"rag/code_qa.md": BODY},
            "prompts directory <root> has no rag/qa.md; the 'qa' template is required",
            id="qa_required",
        ),
    ],
)
def test_load_errors(tmp_path: Path, files: dict[str, str], message: str) -> None:
    root = write_tree(tmp_path / "prompts", files)
    assert load_error(root) == message.replace("<root>", str(root))


def test_symlink_out_of_root_is_an_escape(tmp_path: Path) -> None:
    write_tree(tmp_path, {"secret.md": "secret"})
    root = write_tree(
        tmp_path / "prompts", {"rag/qa.md": "<!-- INCLUDE: ../common/link.md -->\n" + BODY}
    )
    (root / "common").mkdir()
    (root / "common" / "link.md").symlink_to(tmp_path / "secret.md")
    assert load_error(root) == (
        "rag/qa.md: include '../common/link.md' resolves outside the prompts directory"
    )


def test_missing_rag_folder(tmp_path: Path) -> None:
    assert load_error(tmp_path) == f"prompts directory {tmp_path} has no rag/ folder of templates"


def test_invalid_utf8(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"rag/qa.md": BODY})
    (root / "rag" / "qa.md").write_bytes(b"\xff" + BODY.encode())
    assert load_error(root).startswith("rag/qa.md: not valid UTF-8 (")
