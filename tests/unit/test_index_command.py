"""File discovery, batching and the summary of `groundwire index` (no server needed)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from core.models import SourceType
from server.commands import index_command
from server.commands.index_command import batches, discover
from server.commands.index_summary import FormatTally, IndexSummary


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_discover_walks_folders_by_format_and_counts_what_it_skips(tmp_path: Path) -> None:
    root = _tree(
        tmp_path / "docs",
        {
            "b.pdf": "%PDF-1.4",
            "a/page.HTML": "<p>x</p>",
            "a/guide.md": "# x",
            "notes.rst": "x",
            "z.txt": "x",
            "logo.png": "x",
            "data.json": "{}",
            "Makefile": "all:",
            ".git/config.md": "hidden folder",
            ".draft.md": "hidden file",
        },
    )
    summary = IndexSummary("c")
    files = discover([str(root)], summary)
    assert [(f.document_id, f.kind) for f in files] == [
        ("a/guide.md", SourceType.MARKDOWN),
        ("notes.rst", SourceType.TEXT),
        ("z.txt", SourceType.TEXT),
        ("a/page.HTML", SourceType.HTML),
        ("b.pdf", SourceType.PDF),
    ]
    assert summary.skipped == Counter({".png": 1, ".json": 1, "(none)": 1})


def test_a_file_given_directly_is_named_by_its_file_name(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"deep/er/notes.txt": "x"})
    files = discover([str(root / "deep" / "er" / "notes.txt")], IndexSummary("c"))
    assert [f.document_id for f in files] == ["notes.txt"]


def test_two_files_with_the_same_document_id_are_refused(tmp_path: Path) -> None:
    _tree(tmp_path, {"one/README.md": "x", "two/README.md": "y"})
    with pytest.raises(SystemExit) as exc:
        discover([str(tmp_path / "one"), str(tmp_path / "two")], IndexSummary("c"))
    assert str(exc.value) == (
        f"error: {tmp_path / 'one' / 'README.md'} and {tmp_path / 'two' / 'README.md'} would both "
        "be document 'README.md'; index them into separate collections or pass their common "
        "parent folder"
    )


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"^error: .*nowhere does not exist$"):
        discover([str(tmp_path / "nowhere")], IndexSummary("c"))


def test_batches_hold_one_format_and_respect_the_count_and_size_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_command, "BATCH_FILES", 2)
    monkeypatch.setattr(index_command, "BATCH_BYTES", 10)
    root = _tree(
        tmp_path,
        {"a.md": "1234", "b.md": "1234", "c.md": "1234", "d.txt": "123456", "e.txt": "123456"},
    )
    files = discover([str(root)], IndexSummary("c"))
    assert [[f.document_id for f in batch] for batch in batches(files)] == [
        ["a.md", "b.md"],
        ["c.md"],
        ["d.txt"],
        ["e.txt"],
    ]


def test_the_summary_has_a_row_per_format_a_total_skips_and_failures() -> None:
    summary = IndexSummary("docs", elapsed_s=4.0)
    summary.by_format[SourceType.PDF] = FormatTally(
        files=2, upserted=1, failed=1, chunks=6, seconds=3.0
    )
    summary.by_format[SourceType.MARKDOWN] = FormatTally(
        files=3,
        upserted=2,
        unchanged=1,
        chunks=10,
        seconds=1.0,
        risk_flags=Counter({"suspicious_links": 1, "prompt_injection": 2}),
    )
    summary.skipped.update({".png": 2, "(none)": 1})
    summary.failures.append(("scan.pdf", "documents.content: not a PDF"))
    assert summary.lines() == [
        "indexed 5 files into 'docs' in 4.0s: 3 upserted, 1 unchanged, 1 failed; "
        "16 chunks (4.0 chunks/s)",
        "format    files  upserted  unchanged  failed  chunks  seconds  chunks/s  risk flags",
        "markdown      3         2          1       0      10      1.0      10.0  "
        "prompt_injection 2, suspicious_links 1",
        "pdf           2         1          0       1       6      3.0       2.0  -",
        "total         5         3          1       1      16      4.0       4.0  "
        "prompt_injection 2, suspicious_links 1",
        "skipped 3 files with an unsupported extension: (none) 1, .png 2",
        "failed document:",
        "  scan.pdf: documents.content: not a PDF",
    ]
