"""Subprocess for tests/unit/test_tune_crash.py: tune a collection and die (os._exit) at the swap
point, after the tuned model and its dense index are on disk and before the store commits them.

Usage: python -m tests.tune_crash_driver COLLECTION_DIR EXIT_CODE
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from core.catalog.collection import Collection
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.tune.collection_embedders import CollectionEmbedders
from core.tune.options import TuneOptions
from core.tune.tuner import CollectionTuner

CRASH_OPTIONS = TuneOptions(min_pairs=4, max_pairs=16, batch_size=4, max_steps=1)


def main() -> None:
    directory, code = Path(sys.argv[1]), int(sys.argv[2])
    collection = Collection.open(directory.name, directory, None)
    base = SentenceTransformerEmbedder(default_model_path(), device="cpu")
    embedders = CollectionEmbedders(base, lambda path: SentenceTransformerEmbedder(path, "cpu"))
    tuner = CollectionTuner(embedders, "cpu", default_model_path())
    tuner.tune(collection, CRASH_OPTIONS, before_commit=lambda: os._exit(code))
    sys.exit("the tune finished without reaching the swap point")


if __name__ == "__main__":
    main()
