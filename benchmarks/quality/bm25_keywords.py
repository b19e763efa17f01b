"""BM25 on python-faq: the raw query versus the keyword query (`core/retrieve/keywords.py`).

Run: /tmp/gwvenv/bin/python benchmarks/quality/bm25_keywords.py [--dataset DIR]
Builds a `TantivyIndex` in a temporary directory with one document per corpus entry, fed the
way the indexer feeds it (title as the section path root, so `text` = title line + body), then
runs every query through `TantivyIndex.search` with the normalised raw query (what the pipeline
sends today), with `lexical_query(query, extract_keywords(query))`, and (ablation) with the raw
words minus the stopword list only.
Prints the table and writes benchmarks/results/bm25_keywords.{json,md}. No embeddings needed.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import tempfile
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from core.eval.beir import BeirDataset, load_beir
from core.eval.metrics import evaluate_run, mrr_at_k
from core.lexical.query import sanitize_query
from core.lexical.tantivy_index import TantivyIndex
from core.retrieve.keywords import STOPWORDS, extract_keywords, lexical_query
from core.retrieve.query_text import normalize_query
from core.store.records import LexicalRow

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a file: `benchmarks` importable

from benchmarks.ghz.faq_index import DEFAULT_DATASET  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
METRICS = ("mrr@10", "recall@10", "ndcg@10")
K = 10
QUERY_CHARS = 100_000

QUERY_BUILDERS: dict[str, Callable[[str], str]] = {
    "raw query": lambda text: text,
    "keyword query": lambda text: lexical_query(text, extract_keywords(text)),
    # Ablation: only the stopword list, applied to the words `sanitize_query` would keep.
    "raw words minus stopwords": lambda text: " ".join(
        word for word in sanitize_query(text, QUERY_CHARS).split() if word not in STOPWORDS
    ),
}


def build_index(dataset: BeirDataset, directory: Path) -> tuple[TantivyIndex, list[str]]:
    """An index of the corpus (row id = position in file order) and the doc id of each row."""
    index = TantivyIndex.open(directory)
    doc_ids = list(dataset.corpus)
    rows = [
        LexicalRow(row_id, doc.text, doc.title, doc.title)
        for row_id, doc in enumerate(dataset.corpus.values())
    ]
    index.add(rows)
    index.commit(1)
    return index, doc_ids


def run_queries(
    index: TantivyIndex, doc_ids: list[str], queries: Mapping[str, str], build: Callable[[str], str]
) -> dict[str, list[str]]:
    """Top-K document ids per query id."""
    run: dict[str, list[str]] = {}
    for query_id, text in queries.items():
        hits = index.search(build(normalize_query(text, QUERY_CHARS)), K)
        run[query_id] = [doc_ids[row_id] for row_id, _ in hits]
    return run


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test over the queries whose MRR differs."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail: float = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def compare(dataset: BeirDataset) -> dict[str, object]:
    """Metrics per variant plus per-query MRR wins and losses of the keyword query."""
    with tempfile.TemporaryDirectory(prefix="groundwire-bm25-") as tmp:
        index, doc_ids = build_index(dataset, Path(tmp))
        runs = {
            name: run_queries(index, doc_ids, dataset.queries, build)
            for name, build in QUERY_BUILDERS.items()
        }
        index.close()
    per_query = {
        name: {qid: mrr_at_k(run.get(qid, []), rel, K) for qid, rel in dataset.qrels.items()}
        for name, run in runs.items()
    }
    raw, keyword = per_query["raw query"], per_query["keyword query"]
    wins = sum(1 for qid in raw if keyword[qid] > raw[qid])
    losses = sum(1 for qid in raw if keyword[qid] < raw[qid])
    return {
        "results": {name: evaluate_run(run, dataset.qrels, K) for name, run in runs.items()},
        "keyword_vs_raw_mrr": {
            "wins": wins,
            "losses": losses,
            "ties": len(raw) - wins - losses,
            "sign_test_p": sign_test_p(wins, losses),
        },
        "documents": len(dataset.corpus),
        "queries": len(dataset.queries),
        "judged_queries": len(dataset.qrels),
    }


def write(report: dict[str, object]) -> None:
    """Print the table and write the JSON and Markdown results."""
    results: dict[str, dict[str, float]] = report["results"]  # type: ignore[assignment]
    base = results["raw query"]
    lines = [
        "| BM25 query | MRR@10 | Recall@10 | nDCG@10 | ΔMRR@10 | ΔR@10 | ΔnDCG@10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, metrics in results.items():
        lines.append(
            f"| {name} | "
            + " | ".join(f"{metrics[m]:.3f}" for m in METRICS)
            + " | "
            + " | ".join(f"{metrics[m] - base[m]:+.3f}" for m in METRICS)
            + " |"
        )
    paired: dict[str, float] = report["keyword_vs_raw_mrr"]  # type: ignore[assignment]
    summary = (
        f"Keyword query vs raw query, per-query MRR@10: {paired['wins']} better, "
        f"{paired['losses']} worse, {paired['ties']} equal (two-sided sign test p = "
        f"{paired['sign_test_p']:.2g})."
    )
    table = "\n".join(lines)
    print(table + "\n\n" + summary)
    date = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bm25_keywords.json").write_text(
        json.dumps({"date": date, "machine": platform.platform(), **report}, indent=2) + "\n"
    )
    (RESULTS / "bm25_keywords.md").write_text(
        f"# BM25 raw query vs keyword query on python-faq ({date}, {platform.platform()}, "
        f"{report['documents']} documents, {report['queries']} queries)\n\n"
        "Produced by `benchmarks/quality/bm25_keywords.py`: one Tantivy document per corpus entry "
        "(title line + body, as the indexer feeds it), searched through `TantivyIndex.search` with "
        "the normalised raw query, with `lexical_query(query, extract_keywords(query))`, or (ablation) "
        "with the raw words minus the stopword list only.\n\n" + table + "\n\n" + summary + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--dataset",
        type=Path,
        default=DEFAULT_DATASET,
        help="BEIR dir (default: $PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout)",
    )
    args = parser.parse_args()
    write(compare(load_beir(args.dataset)))


if __name__ == "__main__":
    main()
