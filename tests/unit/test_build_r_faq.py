"""benchmarks/quality/build_r_faq: Texinfo HTML split into sections, questions kept headingless."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.quality.build_r_faq import build, sections

_ANSWER = "Use the function as.numeric(levels(f))[f]; as.numeric(f) gives the internal codes."

_FAQ = f"""<html><body><h1 class="settitle">R FAQ</h1>
<div class="contents"><h2 class="contents-heading">Table of Contents</h2>
<ul class="toc"><li><a href="#x">7.10 How do I convert factors to numeric?</a></li></ul></div>
<div class="chapter" id="R-Miscellanea">
<div class="header"><p>Next: <a href="#a">R Programming</a>, Up: <a href="#Top">R FAQ</a></p></div>
<h2 class="chapter">7 R Miscellanea</h2>
<ul class="section-toc"><li><a href="#x">How do I convert factors to numeric?</a></li></ul>
<hr>
<div class="section" id="x">
<div class="header"><p>Next: <a href="#y">Are Trellis displays implemented in R?</a></p></div>
<h3 class="section">7.10 How do I convert
factors to numeric?</h3>
<p>{_ANSWER}</p>
<pre class="example">f &lt;- factor(c(3, 1))
as.numeric(levels(f))[f]
</pre>
</div>
<div class="section" id="z"><h3 class="section">7.11 Citing this document</h3>
<p>Cite it as the R FAQ, with its version and the year it was published by the R Core Team.</p>
<table class="index-cp"><tr><td>factor conversion index entry</td></tr></table>
</div></div></body></html>
"""


def _write(tmp_path: Path) -> Path:
    manuals = tmp_path / "manual"
    manuals.mkdir()
    (manuals / "R-FAQ.html").write_text(_FAQ, encoding="utf-8")
    return manuals


def test_sections_drop_numbers_navigation_and_menus(tmp_path: Path) -> None:
    found = sections(_write(tmp_path) / "R-FAQ.html")
    assert [s.heading for s in found] == [
        "R FAQ",
        "R Miscellanea",
        "How do I convert factors to numeric?",
        "Citing this document",
    ]
    assert found[1].body() == ""  # the chapter's menu and navigation bar are not text
    answer = found[2].body()
    assert answer.startswith(_ANSWER)
    assert "f <- factor(c(3, 1))\nas.numeric(levels(f))[f]" in answer  # <pre> keeps its lines
    assert "Next:" not in answer and "Trellis" not in answer
    assert "index entry" not in found[3].body()


def test_question_is_a_query_and_its_answer_has_no_title(tmp_path: Path) -> None:
    out = tmp_path / "set"
    assert build(_write(tmp_path), out) == {"documents": 2, "queries": 1}
    corpus = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text().splitlines()]
    assert queries == [{"_id": "q1", "text": "How do I convert factors to numeric?"}]
    answer = next(doc for doc in corpus if doc["text"].startswith(_ANSWER))
    assert answer["title"] == "" and answer["_id"] == "R-FAQ#2"
    assert "convert factors to numeric?" not in answer["text"]
    assert (out / "qrels" / "test.tsv").read_text().splitlines() == [
        "query-id\tcorpus-id\tscore",
        "q1\tR-FAQ#2\t1",
    ]
