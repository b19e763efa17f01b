"""Sentence scorers for the extractive answer without the model: quality against the model's.

Run (with no server using the data dir):
  python -m benchmarks.answer.extractive_scorer_sweep [--data-dir DIR] [--queries N]

Builds each question's Answer context in-process as `extractive_shortlist_sweep.py` does (the FAQ
sets with distractors, default request) and picks up to four sentences with:
- `all`: cosine to the question over every sentence (the scorer before issue #16);
- `shortlist`: cosine over the lexical shortlist of 8 (the model-based default before this sweep);
- `lexical p=P l=L`: `sentence_prefilter.prefilter_scores` alone (BM25 against the question's
  keywords / the best, + P / (1 + passage rank), + L for a passage's first sentence), near-repeats
  out by word overlap: no model work at all;
- `gated p=P l=L`: `lexical`, quoting only sentences that share a keyword with the question;
- `static p=P l=L`: cosine of mean MiniLM input token embeddings (no forward pass) + the same
  priors.
Quality as in `extractive_quality.py`: first sentence from the relevant section, any sentence
from it (over questions whose relevant section is in the context), no-answer share, and the share
of first sentences identical to `all`'s. Writes benchmarks/results/extractive_scorer_sweep.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.answer.extractive_shortlist_sweep import (
    MAX_SENTENCES,
    contexts,
    document_of,
    pick,
)
from benchmarks.answer.faq_answer_sets import DEFAULT_DATA, SENTENCE_CACHE, load_sets
from core.answer.sentence_candidates import SentenceCandidate, sentence_candidates
from core.answer.sentence_prefilter import prefilter_scores
from core.catalog.catalog import CollectionCatalog
from core.context.summary import lexical_sentence_scores
from core.embed.cached_embedder import CachedEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.retrieve.pipeline import RetrievalPipeline

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
_WORD = re.compile(r"[^\W_]+")
WEIGHTS = ((0.5, 0.25), (1.0, 0.25), (1.0, 0.5), (2.0, 0.5))
KINDS = ("lexical", "static", "mixed", "gated")
DIVERSE = {"": 0, " 1/doc": 1, " 2/doc": 2}  # label suffix: at most N sentences per document


def lexical_pick(
    scores: list[float], candidates: list[SentenceCandidate], per_document: int = 0
) -> list[int]:
    """The best MAX_SENTENCES by score (ties: context order), near-repeats (word Jaccard >= 0.8)
    out; `per_document` > 0: at most that many sentences from one document."""
    order = sorted(range(len(candidates)), key=lambda i: (-round(scores[i], 6), i))
    picked: list[int] = []
    words: list[frozenset[str]] = []
    taken: dict[str, int] = {}
    for index in order:
        if len(picked) == MAX_SENTENCES or scores[index] < -1e8:
            break
        document = document_of(candidates[index])
        if per_document and taken.get(document, 0) >= per_document:
            continue
        mine = frozenset(_WORD.findall(candidates[index].text.casefold()))
        if all(len(mine & w) < 0.8 * len(mine | w) for w in words):
            picked.append(index)
            words.append(mine)
            taken[document] = taken.get(document, 0) + 1
    return picked


class StaticVectors:
    """Mean MiniLM input (wordpiece) embeddings of a text, normalised: no forward pass."""

    def __init__(self) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model = Path(default_model_path())
        weights = load_file(str(model / "model.safetensors"))
        name = next(k for k in weights if k.endswith("word_embeddings.weight"))
        self._table = weights[name].astype(np.float32)
        self._tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))

    def __call__(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        for row, encoding in enumerate(self._tokenizer.encode_batch(texts)):
            ids = [
                i
                for i, special in zip(encoding.ids, encoding.special_tokens_mask, strict=True)
                if not special
            ]
            if ids:
                out[row] = self._table[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)


def sweep(
    embedder: CachedEmbedder,
    static: StaticVectors,
    items: list[Any],
    relevant: Callable[[str], set[str]],
) -> dict[str, dict[str, float]]:
    """Quality of each scorer over one set's questions."""
    labels = ["all", "shortlist"]
    labels += [
        f"{kind} p={p} l={lead}{d}" for kind in KINDS for p, lead in WEIGHTS for d in DIVERSE
    ]
    tallies = {label: {"top": 0, "any": 0, "same_top": 0, "answered": 0} for label in labels}
    answerable = 0
    for query_id, question, passages, documents in items:
        candidates = sentence_candidates(passages)
        rel = relevant(query_id)
        is_answerable = bool(rel & documents)
        answerable += is_answerable
        if not candidates:
            continue
        vectors = embedder.embed_documents([c.text for c in candidates])
        query = embedder.embed_documents([question])[0]
        scores = vectors @ query
        everything = list(range(len(candidates)))
        reference = pick(scores, vectors, everything)
        default = prefilter_scores(question, candidates)
        listed = sorted(sorted(everything, key=lambda i: (-default[i], i))[:8])
        choices = {"all": reference, "shortlist": pick(scores, vectors, listed)}
        raw = lexical_sentence_scores(question, [c.text for c in candidates])
        statics = static([question, *(c.text for c in candidates)])
        cosine = statics[1:] @ statics[0]
        for p, lead in WEIGHTS:
            cheap = prefilter_scores(question, candidates, p, lead)
            prior = [
                float(cosine[i]) + p / (1 + c.passage) + (lead if c.position == 0 else 0.0)
                for i, c in enumerate(candidates)
            ]
            mixed = [a + float(cosine[i]) for i, a in enumerate(cheap)]
            gated = [a if raw[i] > 0 else -1e9 for i, a in enumerate(cheap)]
            kinds = (("lexical", cheap), ("static", prior), ("mixed", mixed), ("gated", gated))
            for kind, values in kinds:
                for d, limit in DIVERSE.items():
                    choices[f"{kind} p={p} l={lead}{d}"] = lexical_pick(values, candidates, limit)
        for label, chosen in choices.items():
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
            "no_answer": 1.0 - t["answered"] / max(len(items), 1),
            "answerable": answerable,
            "questions": len(items),
        }
        for label, t in tallies.items()
    }


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
    static = StaticVectors()
    catalog = CollectionCatalog(args.data_dir)
    catalog.open_all()
    results: dict[str, Any] = {}
    with ThreadPoolExecutor(2) as pool:
        pipeline = RetrievalPipeline(catalog, embedder, pool)
        for answer_set in load_sets(args.distractors):
            items = contexts(pipeline, answer_set.name, answer_set.questions(args.queries))
            results[answer_set.name] = sweep(embedder, static, items, answer_set.relevant)
            print(answer_set.name, "done", flush=True)
    header = " | ".join(f"{s}: top / any / same top / no answer" for s in results)
    rows = [f"| scorer | {header} |", "|---|" + "---|" * len(results)]
    for label in next(iter(results.values())):
        cells = [
            f"{r[label]['top_relevant']:.3f} / {r[label]['any_relevant']:.3f} / "
            f"{r[label]['same_top_as_all']:.3f} / {r[label]['no_answer']:.3f}"
            for r in results.values()
        ]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    table = "\n".join(rows)
    print(table)
    answerable = ", ".join(
        f"{name} {next(iter(r.values()))['answerable']} of {next(iter(r.values()))['questions']}"
        for name, r in results.items()
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "extractive_scorer_sweep.json").write_text(json.dumps(results, indent=2) + "\n")
    (RESULTS / "extractive_scorer_sweep.md").write_text(
        f"# Extractive sentence scorers without the model ({datetime.now(UTC).isoformat()})\n\n"
        f"The first {args.queries or 'all'} questions of each set (FAQ pages + "
        f"{args.distractors} distractor sections), default Answer context (hybrid, top_k 10, "
        f"2,000 tokens). Answerable (relevant section in the context): {answerable}. top / any: "
        "share of answerable questions whose first / any quoted sentence is from the relevant "
        "section; same top: first sentence identical to `all`'s; no answer: share answered with "
        "no sentence. p: passage-rank weight, l: lead-sentence weight; N/doc: at most N sentences "
        "per document. The default `lexical` scoring (core/answer/lexical_choice.py) is "
        "`gated p=2.0 l=0.5 1/doc`.\n\n" + table + "\n"
    )


if __name__ == "__main__":
    main()
