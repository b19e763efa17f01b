"""Is the default's dense ranking limited by its candidate pool? Exact numpy search over a built
collection's own stored vectors.

The default rescoring (`core/retrieve/section_scores.py`) mixes each chunk's cosine with its
section vector's, but only for the `depth` chunks the dense index returned (50 at top_k 10). A
section whose vector is close to the query while none of its chunks ranks in that pool can never
be found by its section vector, which the plain vector store (one vector per section) finds
directly. This script ranks documents, per query, by rules that differ only in which chunks are
rescored: the default pool, deeper pools, the pool plus every chunk of the best sections by
section vector, and every chunk of the collection (the limit of any candidate rule); and, for
reference, the section vectors alone. Dense only (no BM25), query vectors from the torch model.

Run from the repository root, on a collection built by `benchmarks.ghz.faq_index`:
    python -m benchmarks.quality.section_pool --store DIR/tenants/default/python-faq/store.sqlite3
        --dataset DATASET [--name section_pool-python-faq]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.eval.beir import load_beir
from core.eval.metrics import evaluate_run
from core.retrieve.query_text import normalize_query
from core.retrieve.section_scores import SECTION_WEIGHT, with_section_scores

DEPTH = 50
"""What a default Retrieve at top_k 10 asks the dense index for (`RetrievalRequest.depth`)."""
RESULTS = Path(__file__).resolve().parents[1] / "results"


class StoredCollection:
    """The chunk and section vectors of a store, with each chunk's document and section."""

    def __init__(self, store: Path) -> None:
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        rows = con.execute(
            "SELECT row_id, document_id, section_path_json, embedding FROM chunks ORDER BY row_id"
        ).fetchall()
        sections = dict(
            ((document, path), np.frombuffer(blob, dtype=np.float32))
            for document, path, blob in con.execute(
                "SELECT document_id, section_path_json, embedding FROM sections"
            )
        )
        con.close()
        self.row_ids = np.array([row[0] for row in rows], dtype=np.int64)
        self.index = {int(row[0]): i for i, row in enumerate(rows)}
        self.documents = [str(row[1]) for row in rows]
        self.chunks = np.stack([np.frombuffer(row[3], dtype=np.float32) for row in rows])
        keys = [(row[1], row[2]) for row in rows]
        has = [key in sections for key in keys]
        # exactly what the pipeline rescores with: chunks whose section has a stored vector
        self.section_rows = self.row_ids[np.array(has)]
        self.section_of_chunk = np.stack([sections[key] for key in keys if key in sections])
        first: dict[tuple[str, str], int] = {}
        for i, key in enumerate(keys):
            first.setdefault(key, i)
        self.section_keys = list(first)
        # a section without a stored vector is one chunk: its vector stands for the section
        self.section_matrix = np.stack(
            [sections[key] if key in sections else self.chunks[first[key]] for key in first]
        )
        members: dict[tuple[str, str], list[int]] = {}
        for i, key in enumerate(keys):
            members.setdefault(key, []).append(i)
        self.section_members = [members[key] for key in self.section_keys]
        self.multi_chunk = sum(len(m) > 1 for m in self.section_members)


def ranked_documents(collection: StoredCollection, ranking: list[tuple[int, float]]) -> list[str]:
    """Documents in order of their best chunk."""
    seen: dict[str, None] = {}
    for row_id, _ in ranking:
        seen.setdefault(collection.documents[collection.index[row_id]], None)
    return list(seen)


def rescored(
    collection: StoredCollection, pool: Sequence[int], query: np.ndarray, cosines: np.ndarray
) -> list[str]:
    """The pool (chunk indexes) ranked by the pipeline's own section rescoring."""
    ranking = [(int(collection.row_ids[i]), float(cosines[i])) for i in pool]
    ranking.sort(key=lambda item: -item[1])
    ids, vectors = collection.section_rows, collection.section_of_chunk
    wanted = np.isin(ids, [row_id for row_id, _ in ranking])
    mixed = with_section_scores(ranking, query, ids[wanted], vectors[wanted], SECTION_WEIGHT)
    return ranked_documents(collection, mixed)


Rule = Callable[[StoredCollection, np.ndarray], list[str]]


def rules() -> dict[str, Rule]:
    def sections_only(c: StoredCollection, q: np.ndarray) -> list[str]:
        order = np.argsort(-(c.section_matrix @ q), kind="stable")
        seen: dict[str, None] = {}
        for s in order:
            seen.setdefault(c.documents[c.section_members[s][0]], None)
        return list(seen)

    def pool(depth: int, sections: int = 0) -> Rule:
        def rule(c: StoredCollection, q: np.ndarray) -> list[str]:
            cosines = c.chunks @ q
            chosen = set(np.argsort(-cosines, kind="stable")[:depth].tolist())
            if sections:
                best = np.argsort(-(c.section_matrix @ q), kind="stable")[:sections]
                chosen.update(i for s in best for i in c.section_members[s])
            return rescored(c, sorted(chosen), q, cosines)

        return rule

    return {
        "section vectors alone (the plain vector store)": sections_only,
        f"default: top {DEPTH} chunks rescored": pool(DEPTH),
        f"top {2 * DEPTH} chunks rescored": pool(2 * DEPTH),
        f"top {4 * DEPTH} chunks rescored": pool(4 * DEPTH),
        f"top {DEPTH} chunks + every chunk of the 10 best sections": pool(DEPTH, 10),
        f"top {DEPTH} chunks + every chunk of the 50 best sections": pool(DEPTH, 50),
        "every chunk rescored (no pool limit)": pool(1 << 30),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="a collection's store.sqlite3")
    parser.add_argument("--dataset", type=Path, required=True, help="its BEIR directory")
    parser.add_argument("--name", default="", help="results file name (default: no file)")
    args = parser.parse_args()
    collection = StoredCollection(args.store)
    data = load_beir(args.dataset)
    query_ids = [q for q in data.queries if q in data.qrels]
    embedder = SentenceTransformerEmbedder(default_model_path(), "cpu", 32)
    vectors = embedder.embed_queries([normalize_query(data.queries[q], 100_000) for q in query_ids])
    table = {}
    for name, rule in rules().items():
        run = {q: rule(collection, vectors[i]) for i, q in enumerate(query_ids)}
        table[name] = evaluate_run(run, {q: data.qrels[q] for q in query_ids}, 10)
    header = (
        f"{args.dataset.name}: {len(set(collection.documents))} documents, "
        f"{len(collection.row_ids)} chunks, {len(collection.section_keys)} sections "
        f"({collection.multi_chunk} of more than one chunk), {len(query_ids)} queries; "
        f"section weight {SECTION_WEIGHT}, {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}"
    )
    lines = [header, "", "| rule | MRR@10 | Recall@10 |", "|---|---|---|"]
    lines += [f"| {n} | {m['mrr@10']:.4f} | {m['recall@10']:.4f} |" for n, m in table.items()]
    print("\n".join(lines))
    if args.name:
        (RESULTS / f"{args.name}.json").write_text(
            json.dumps({"header": header, "rules": table}, indent=1) + "\n"
        )


if __name__ == "__main__":
    main()
