"""python-faq indexed once into a groundwire data directory, cached outside the repository.

Run from the repository root: python -m benchmarks.ghz.faq_index [--quick] [--data-dir DIR]

The ghz and peers benchmarks serve this directory with `groundwire serve --data-dir`. It is keyed
by corpus (file size and hash, sections), model (path) and code version (git tree of `core/`,
plus a hash of uncommitted changes under it), so a stale index is never served: a changed key
builds a new directory. Document vectors go through `CachedEmbedder` (a SQLite file beside the
directories), so a rebuild after a code change only re-embeds chunks whose text changed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _default_dataset() -> Path:
    """$PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout, else /work/shared's."""
    if "PYTHON_FAQ_DIR" in os.environ:
        return Path(os.environ["PYTHON_FAQ_DIR"])
    beside = ROOT.parent / "shared" / "data" / "python-faq"
    return beside if beside.is_dir() else Path("/work/shared/data/python-faq")


DEFAULT_DATASET = _default_dataset()
DEFAULT_CACHE = Path(os.environ.get("GW_BENCH_CACHE", Path.home() / ".cache" / "groundwire-bench"))
COLLECTION = "python-faq"
QUICK_SECTIONS = 600
"""Sections in --quick mode: every section a query is judged against, then corpus order."""
READY = "READY.json"


def code_version(root: Path = ROOT) -> str:
    """Git tree id of `core/` at HEAD, plus a hash of uncommitted changes under it (if any)."""
    tree = subprocess.run(
        ["git", "rev-parse", "HEAD:core"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    diff = subprocess.run(
        ["git", "diff", "HEAD", "--", "core"], cwd=root, capture_output=True, check=True
    ).stdout
    return tree[:12] + ("-dirty-" + hashlib.sha256(diff).hexdigest()[:8] if diff else "")


def corpus_digest(dataset: Path) -> str:
    """sha256 prefix of corpus.jsonl and the qrels (what the index and the metrics depend on)."""
    digest = hashlib.sha256()
    for name in ("corpus.jsonl", "qrels/test.tsv"):
        digest.update((dataset / name).read_bytes())
    return digest.hexdigest()[:12]


def subset_ids(dataset: Path, sections: int | None) -> list[str]:
    """Document ids to index: all of them, or the judged ones first and then corpus order."""
    with (dataset / "corpus.jsonl").open(encoding="utf-8") as lines:
        ids = [json.loads(line)["_id"] for line in lines if line.strip()]
    if sections is None or sections >= len(ids):
        return ids
    judged: dict[str, None] = {}
    with (dataset / "qrels" / "test.tsv").open(encoding="utf-8") as rows:
        for row in rows:
            parts = row.rstrip("\n").split("\t")
            if len(parts) >= 2 and parts[0] != "query-id":
                judged.setdefault(parts[1], None)
    chosen = dict(judged)
    for doc_id in ids:
        if len(chosen) >= sections:
            break
        chosen.setdefault(doc_id, None)
    wanted = set(chosen)
    return [doc_id for doc_id in ids if doc_id in wanted]


def index_key(dataset: Path, sections: int | None, model: str) -> dict[str, str]:
    """What the cached directory depends on."""
    return {
        "corpus": f"{dataset.name}-{corpus_digest(dataset)}",
        "sections": "all" if sections is None else str(sections),
        "model": hashlib.sha256(model.encode()).hexdigest()[:8],
        "code": code_version(),
    }


def key_dir(cache: Path, key: dict[str, str]) -> Path:
    """The data directory for `key`."""
    return (
        cache / "indexes" / "_".join(key[name] for name in ("corpus", "sections", "model", "code"))
    )


def ensure_index(
    dataset: Path = DEFAULT_DATASET, cache: Path = DEFAULT_CACHE, sections: int | None = None
) -> tuple[Path, dict[str, object]]:
    """The data directory holding `COLLECTION` (built now if missing) and its READY record."""
    from core.embed.sentence_transformer_embedder import default_model_path

    model = str(default_model_path())
    key = index_key(dataset, sections, model)
    data_dir = key_dir(cache, key)
    ready = data_dir / READY
    if ready.is_file():
        return data_dir, json.loads(ready.read_text())
    record = build(dataset, cache, data_dir, sections, model)
    record["key"] = key
    ready.write_text(json.dumps(record, indent=2) + "\n")
    return data_dir, record


def build(
    dataset: Path, cache: Path, data_dir: Path, sections: int | None, model: str
) -> dict[str, object]:
    """Index the (subset of the) corpus into `data_dir` with the server's collection defaults."""
    from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
    from core.catalog.collection_config import CollectionConfig
    from core.dense.spec import DenseIndexSpec
    from core.embed.cached_embedder import CachedEmbedder
    from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
    from core.eval.beir import load_beir
    from core.eval.runner import index_dataset
    from core.indexer import Indexer
    from server.settings import Settings

    if data_dir.exists():
        shutil.rmtree(data_dir)  # an interrupted build
    data_dir.mkdir(parents=True)
    data = load_beir(dataset)
    wanted = set(subset_ids(dataset, sections))
    data = replace(data, corpus={k: v for k, v in data.corpus.items() if k in wanted})
    settings = Settings()
    embedder = SentenceTransformerEmbedder(model, "cpu", settings.model.batch_size)
    cached = CachedEmbedder(embedder, cache / "embeddings.sqlite")
    config = CollectionConfig(
        dense=DenseIndexSpec(),
        chunk_max_tokens=settings.indexing.chunk_max_tokens,
        description="python-faq for benchmarks/ghz and benchmarks/peers",
        embedding_model=embedder.model_name,
        embedding_dim=embedder.dimension,
    )
    catalog = CollectionCatalog(data_dir)
    catalog.open_all()
    indexer = Indexer(cached, config.chunk_max_tokens, max_document_bytes=1 << 30)
    started = time.monotonic()
    done = 0

    def progress(n: int) -> None:
        nonlocal done
        done += n
        elapsed = time.monotonic() - started
        print(f"indexed {done}/{len(data.corpus)} sections in {elapsed:.0f} s", file=sys.stderr)

    index_dataset(data, catalog, indexer, config, progress, COLLECTION)
    chunks = catalog.get(DEFAULT_TENANT, COLLECTION).store.counts()[1]
    catalog.close()
    return {
        "collection": COLLECTION,
        "documents": len(data.corpus),
        "chunks": chunks,
        "index_s": round(time.monotonic() - started, 1),
        "embedding_cache_hits": cached.hits,
        "embedding_cache_misses": cached.misses,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE, help="cache root")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SECTIONS} sections")
    args = parser.parse_args()
    data_dir, record = ensure_index(
        args.dataset, args.data_dir, QUICK_SECTIONS if args.quick else None
    )
    print(json.dumps({"data_dir": str(data_dir), **record}, indent=2))


if __name__ == "__main__":
    main()
