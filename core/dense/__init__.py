"""Dense (vector) retrieval: the `DenseIndex` protocol and its FAISS and torch implementations.

`FaissIndex` is imported on first use, so the torch engine works where faiss is not installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.dense.framed_file import CorruptIndexFile
from core.dense.protocol import DenseIndex
from core.dense.spec import DenseIndexSpec, DenseKind

if TYPE_CHECKING:
    from core.dense.faiss_index import FaissIndex

__all__ = ["CorruptIndexFile", "DenseIndex", "DenseIndexSpec", "DenseKind", "FaissIndex"]


def __getattr__(name: str) -> Any:
    """`FaissIndex`, imported lazily (it needs faiss)."""
    if name == "FaissIndex":
        from core.dense.faiss_index import FaissIndex

        return FaissIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
