"""Dense (vector) retrieval: the `DenseIndex` protocol and its FAISS implementation."""

from __future__ import annotations

from core.dense.faiss_index import FaissIndex
from core.dense.framed_file import CorruptIndexFile
from core.dense.protocol import DenseIndex
from core.dense.spec import DenseIndexSpec, DenseKind

__all__ = ["CorruptIndexFile", "DenseIndex", "DenseIndexSpec", "DenseKind", "FaissIndex"]
