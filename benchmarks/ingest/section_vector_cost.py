"""What section vectors cost at ingest: the bundled demo corpus indexed with and without them.

Run from the repository root: .venv/bin/python -m benchmarks.ingest.section_vector_cost [--rounds N]

Indexes the demo corpus (server/demo_corpus, Markdown FAQ pages: many short sections) with the
real Indexer and model on CPU into a fresh collection, alternately with section vectors off and on
(one extra embedding per section), N rounds each, in the same process and under the same load.
No embedding cache. Writes results/section_vector_ingest.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.indexer import Indexer
from core.models import Document, SourceType

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
CORPUS = ROOT / "server" / "demo_corpus"


def index_once(
    model: SentenceTransformerEmbedder, documents: list[Document], sections: bool
) -> tuple[int, int, float]:
    """(chunks, sections, seconds) of indexing `documents` into a new collection."""
    with tempfile.TemporaryDirectory(prefix="gw-section-cost-") as tmp:
        catalog = CollectionCatalog(Path(tmp))
        catalog.open_all()
        config = CollectionConfig(
            embedding_model=model.model_name,
            embedding_dim=model.dimension,
            section_vectors=sections,
        )
        collection = catalog.create(DEFAULT_TENANT, "c", config)
        indexer = Indexer(model, config.chunk_max_tokens, max_document_bytes=1 << 30)
        started = time.perf_counter()
        outcomes = indexer.index(collection, documents)
        elapsed = time.perf_counter() - started
        stored = collection.store.get_section_vectors(
            [i for ids, _ in collection.store.iter_live_vectors() for i in ids.tolist()]
        )[0]
        section_count = len({collection.get_chunks([int(i)])[int(i)].section_path for i in stored})
        catalog.close()
    return sum(o.chunk_count for o in outcomes), section_count, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    model = SentenceTransformerEmbedder(default_model_path(), "cpu")
    documents = [
        Document(p.stem, p.read_text(), SourceType.MARKDOWN, source_path=p.name)
        for p in sorted(CORPUS.glob("faq-*.md"))
    ]
    model.embed_documents(["warm-up"])
    runs: dict[str, list[float]] = {"off": [], "on": []}
    counts: dict[str, tuple[int, int]] = {}
    for _ in range(args.rounds):
        for label, flag in (("off", False), ("on", True)):
            chunks, sections, seconds = index_once(model, documents, flag)
            runs[label].append(seconds)
            counts[label] = (chunks, sections)
    chunks = counts["off"][0]
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "documents": len(documents),
        "chunks": chunks,
        "sections": counts["on"][1],
        "seconds": runs,
        "chunks_per_s": {k: round(chunks / statistics.median(v), 2) for k, v in runs.items()},
    }
    write(report)


def write(report: dict[str, object]) -> None:
    rate: dict[str, float] = report["chunks_per_s"]  # type: ignore[assignment]
    seconds: dict[str, list[float]] = report["seconds"]  # type: ignore[assignment]
    table = "\n".join(
        [
            "| section vectors | runs (s) | median chunks/s | vs off |",
            "|---|---|---|---|",
            *(
                f"| {label} | {', '.join(f'{s:.1f}' for s in seconds[label])} | {rate[label]:.2f} | "
                f"{rate[label] / rate['off'] - 1:+.0%} |"
                for label in ("off", "on")
            ),
        ]
    )
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "section_vector_ingest.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "section_vector_ingest.md").write_text(
        f"# Ingest cost of section vectors ({report['date']}, {report['machine']})\n\n"
        "Produced by `benchmarks/ingest/section_vector_cost.py`: the demo corpus "
        f"({report['documents']} Markdown FAQ pages, {report['chunks']} chunks, "
        f"{report['sections']} sections) indexed on CPU with the real indexer, section vectors off "
        "and on alternately in one process (no embedding cache). A Markdown FAQ has about one "
        "section per question, the worst case for the extra embedding per section; a flat FAQ "
        "document is one section.\n\n" + table + "\n"
    )


if __name__ == "__main__":
    main()
