"""Where a collection's tuned model lives: `<collection>/models/<id>/`, a plain
sentence-transformers directory (loadable by `SentenceTransformer(path)`, exportable like any
other), written under a temporary name and renamed into place."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from core.catalog.collection import MODELS_DIR
from core.store.atomic_file import fsync_directory

if TYPE_CHECKING:  # a process that serves tuned models without training never imports torch
    from sentence_transformers import SentenceTransformer

TEMP_PREFIX = ".tmp-"


def new_model_id() -> str:
    """A fresh model id: UTC time and 32 random bits, e.g. `20261124T013000Z-1a2b3c4d`."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{uuid.uuid4().hex[:8]}"


def tuned_model_path(collection_dir: Path, model_id: str) -> Path:
    """The directory of the tuned model `model_id` of the collection in `collection_dir`."""
    return collection_dir / MODELS_DIR / model_id


def save_tuned_model(model: SentenceTransformer, collection_dir: Path, model_id: str) -> Path:
    """Write `model` to `models/<model_id>/` atomically (a temporary directory, fsynced, then
    renamed); its path. A crash leaves at most a `.tmp-*` directory that opening removes."""
    models = collection_dir / MODELS_DIR
    models.mkdir(exist_ok=True)
    temp = models / f"{TEMP_PREFIX}{uuid.uuid4().hex}"
    model.save(str(temp))
    for path in temp.rglob("*"):
        if path.is_file():
            with path.open("rb") as handle:
                os.fsync(handle.fileno())
    fsync_directory(temp)
    target = tuned_model_path(collection_dir, model_id)
    os.rename(temp, target)
    fsync_directory(models)
    return target
