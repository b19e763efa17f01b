"""What Milvus mode refuses, and the message naming what to do instead."""

from __future__ import annotations

BACKUP_TOOL = "milvus-backup (https://github.com/zilliztech/milvus-backup)"
TUNE_OPERATION = "TuneCollection"
TUNE_REFUSAL = (
    'TuneCollection is not available with storage.backend = "milvus": a tuned model lives in '
    "one replica's data directory, while every replica serves the same Milvus collection; tune "
    'with storage.backend = "local"'
)
