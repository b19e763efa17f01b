"""Configuration of a dense index: which FAISS structure and its tuning parameters."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class DenseKind(StrEnum):
    """The supported index structures."""

    FLAT = "flat"
    HNSW = "hnsw"
    IVF_FLAT = "ivf_flat"


IVF_MIN_POINTS_PER_LIST = 39
"""FAISS k-means wants at least this many training points per list."""

IVF_AUTO_MIN_TRAIN = 1024
"""With `ivf_nlist=None`, vectors stay in a flat index until this many exist."""


@dataclass(frozen=True, slots=True)
class DenseIndexSpec:
    """Which dense index to build.

    `kind`: "flat" (exact), "hnsw" (graph; `hnsw_m` links per node, `hnsw_ef_construction` and
    `hnsw_ef_search` candidate-list sizes) or "ivf_flat" (`ivf_nlist` inverted lists, None to
    derive it from the data at training time; `ivf_nprobe` lists probed per query).
    """

    kind: str = DenseKind.FLAT.value
    hnsw_m: int = 32
    hnsw_ef_construction: int = 80
    hnsw_ef_search: int = 64
    ivf_nlist: int | None = None
    ivf_nprobe: int = 16

    def __post_init__(self) -> None:
        kinds = [kind.value for kind in DenseKind]
        if self.kind not in kinds:
            raise ValueError(f"dense index kind {self.kind!r} is unknown; use one of {kinds}")
        positive = {
            "hnsw_m": self.hnsw_m,
            "hnsw_ef_construction": self.hnsw_ef_construction,
            "hnsw_ef_search": self.hnsw_ef_search,
            "ivf_nprobe": self.ivf_nprobe,
            "ivf_nlist": 1 if self.ivf_nlist is None else self.ivf_nlist,
        }
        for name, value in positive.items():
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")

    @property
    def dense_kind(self) -> DenseKind:
        """`kind` as the enum."""
        return DenseKind(self.kind)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (inverse: `from_json`)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DenseIndexSpec:
        """Rebuild a spec written by `to_json`."""
        return cls(**data)


def ivf_nlist_for(spec: DenseIndexSpec, count: int) -> int | None:
    """The number of IVF lists to train with `count` vectors, or None while too few exist.

    An explicit `ivf_nlist` needs `IVF_MIN_POINTS_PER_LIST * ivf_nlist` vectors. Otherwise
    training waits for `IVF_AUTO_MIN_TRAIN` vectors and uses min(4 * sqrt(n), n / 39) lists.
    """
    if spec.ivf_nlist is not None:
        return spec.ivf_nlist if count >= IVF_MIN_POINTS_PER_LIST * spec.ivf_nlist else None
    if count < IVF_AUTO_MIN_TRAIN:
        return None
    return max(1, min(int(4 * math.sqrt(count)), count // IVF_MIN_POINTS_PER_LIST))
