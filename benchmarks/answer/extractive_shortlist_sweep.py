"""Which sentences to embed: the extractive shortlist's size and weights, against embedding all.

Run (with no server using the data dir):
  python -m benchmarks.answer.extractive_shortlist_sweep [--data-dir DIR] [--cache FILE]
      [--distractors N] [--queries N]

Opens the collections `extractive_throughput.py` indexed (the FAQ sets with distractors), builds
each question's Answer context in-process exactly as AnswerService does (default request: hybrid,
top_k 10, 2,000-token budget), and ranks its candidate sentences the way ExtractiveGenerator does:
cosine to the question over every sentence ("all", the scorer before issue #16) or over a
`sentence_prefilter` shortlist of N. Sentence vectors come from a SQLite cache, `--cache` (default
`extractive/sentences.sqlite` of $GW_BENCH_CACHE, else ~/.cache/groundwire-bench; MiniLM embeds
queries and documents alike, so one vector per sentence serves both). Quality as in
`extractive_quality.py`: first sentence from the relevant section, any sentence from it, and the
share of first sentences identical to "all"'s. Writes
benchmarks/results/extractive_shortlist_sweep.{json,md}.
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.answer.faq_answer_sets import DEFAULT_DATA, SENTENCE_CACHE, load_sets
from core.answer.extractive_generator import DUPLICATE_SIMILARITY
from core.answer.protocol import ContextPassage
from core.answer.sentence_candidates import SentenceCandidate, sentence_candidates
from core.answer.sentence_prefilter import prefilter_scores
from core.catalog.catalog import CollectionCatalog
from core.embed.cached_embedder import CachedEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
MAX_SENTENCES = 4
MIN_SIMILARITY = 0.2


def contexts(
    pipeline: RetrievalPipeline, collection: str, questions: list[tuple[str, str]]
) -> list[tuple[str, str, list[ContextPassage], set[str]]]:
    """(query id, question, passages, context documents) per question, as AnswerService builds
    the generator's passages."""
    out = []
    for query_id, question in questions:
        result = pipeline.retrieve(RetrievalRequest(query=question, collection=collection))
        by_row = {h.chunk.row_id: h for h in result.hits}
        included = [by_row[row] for row in result.context.included_row_ids]
        passages = [
            ContextPassage(c.tag, placed, h.chunk.section_path)
            for c, h, placed in zip(
                result.context.citations, included, result.context.passages, strict=True
            )
        ]
        documents = {c.document_id for c in result.context.citations}
        out.append((query_id, question, passages, documents))
    return out


def pick(scores: np.ndarray, vectors: np.ndarray, pool: list[int]) -> list[int]:
    """ExtractiveGenerator's choice among `pool` (indices in context order): by descending
    cosine, ties in context order, near-repeats out, at most MAX_SENTENCES above MIN_SIMILARITY."""
    order = sorted(pool, key=lambda i: (-round(float(scores[i]), 6), i))
    picked: list[int] = []
    for index in order:
        if len(picked) == MAX_SENTENCES or float(scores[index]) < MIN_SIMILARITY:
            break
        if all(float(vectors[index] @ vectors[other]) < DUPLICATE_SIMILARITY for other in picked):
            picked.append(index)
    return picked


def document_of(candidate: SentenceCandidate) -> str:
    """The document id in the candidate's citation tag."""
    return candidate.tag.split("DOC:", 1)[1].split(" | ", 1)[0]


def sweep(embedder: CachedEmbedder, items: list[Any], relevant: Any, configs: list[Any]) -> dict:
    """Quality of each (label, N, passage_weight, lead_weight) config; N None: all sentences."""
    tallies = {c[0]: {"top": 0, "any": 0, "same_top": 0, "answered": 0} for c in configs}
    answerable = 0
    for query_id, question, passages, documents in items:
        candidates = sentence_candidates(passages)
        if not candidates:
            continue
        vectors = embedder.embed_documents([c.text for c in candidates])
        query = embedder.embed_documents([question])[0]
        scores = vectors @ query
        rel = relevant(query_id)
        is_answerable = bool(rel & documents)
        answerable += is_answerable
        reference = pick(scores, vectors, list(range(len(candidates))))
        for label, limit, passage_weight, lead_weight in configs:
            if limit is None:
                pool = list(range(len(candidates)))
            else:
                cheap = prefilter_scores(question, candidates, passage_weight, lead_weight)
                pool = sorted(sorted(range(len(candidates)), key=lambda i: (-cheap[i], i))[:limit])
            chosen = pick(scores, vectors, pool)
            tally = tallies[label]
            tally["answered"] += bool(chosen)
            tally["same_top"] += bool(chosen and reference and chosen[0] == reference[0])
            if is_answerable and chosen:
                docs = [document_of(candidates[i]) for i in chosen]
                tally["top"] += docs[0] in rel
                tally["any"] += any(d in rel for d in docs)
    return {
        label: {
            "top_relevant": t["top"] / max(answerable, 1),
            "any_relevant": t["any"] / max(answerable, 1),
            "same_top_as_all": t["same_top"] / max(len(items), 1),
            "answered": t["answered"] / max(len(items), 1),
            "answerable": answerable,
            "questions": len(items),
        }
        for label, t in tallies.items()
    }


def configs() -> list[tuple[str, int | None, float, float]]:
    """The scorings compared."""
    out: list[tuple[str, int | None, float, float]] = [("all", None, 0.0, 0.0)]
    for limit in (4, 6, 8, 12, 16, 24):
        for passage_weight, lead_weight in ((0.0, 0.0), (0.5, 0.0), (0.5, 0.25), (1.0, 0.25)):
            out.append(
                (
                    f"N={limit} p={passage_weight} l={lead_weight}",
                    limit,
                    passage_weight,
                    lead_weight,
                )
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--data-dir", type=Path, default=DEFAULT_DATA, help="indexed sets (default: %(default)s)"
    )
    parser.add_argument(
        "--cache", type=Path, default=SENTENCE_CACHE, help="sentence vectors (default: %(default)s)"
    )
    parser.add_argument("--distractors", type=int, default=300)
    parser.add_argument("--queries", type=int, default=100, help="per set; 0: all")
    args = parser.parse_args()
    embedder = CachedEmbedder(
        SentenceTransformerEmbedder(default_model_path(), "cpu", 32), args.cache
    )
    catalog = CollectionCatalog(args.data_dir)
    catalog.open_all()
    results: dict[str, Any] = {}
    with ThreadPoolExecutor(2) as pool:
        pipeline = RetrievalPipeline(catalog, embedder, pool)
        for answer_set in load_sets(args.distractors):
            items = contexts(pipeline, answer_set.name, answer_set.questions(args.queries))
            results[answer_set.name] = sweep(embedder, items, answer_set.relevant, configs())
            print(answer_set.name, "done", flush=True)
    rows = ["| scoring | " + " | ".join(f"{s}: top / any / same top" for s in results) + " |"]
    rows.append("|---|" + "---|" * len(results))
    for label, *_ in configs():
        cells = [
            f"{r[label]['top_relevant']:.3f} / {r[label]['any_relevant']:.3f} / "
            f"{r[label]['same_top_as_all']:.3f}"
            for r in results.values()
        ]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    table = "\n".join(rows)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "extractive_shortlist_sweep.json").write_text(json.dumps(results, indent=2) + "\n")
    answerable = ", ".join(
        f"{name} {next(iter(r.values()))['answerable']} of {next(iter(r.values()))['questions']}"
        for name, r in results.items()
    )
    (RESULTS / "extractive_shortlist_sweep.md").write_text(
        "# Extractive shortlist sweep: sentences embedded per answer vs quality\n\n"
        f"The first {args.queries or 'all'} questions of each set (FAQ pages + 300 distractor sections), default Answer context. "
        "top / any: share of answerable questions (relevant section in the context: "
        f"{answerable}) whose first / any quoted sentence is from the relevant section; same "
        "top: share whose first sentence equals the all-sentences scorer's. N: sentences "
        "embedded; p: passage-rank weight; l: lead-sentence weight.\n\n" + table + "\n"
    )


if __name__ == "__main__":
    main()
