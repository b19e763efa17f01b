"""Configuration of a dense index: which FAISS structure and its tuning parameters."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class DenseKind(StrEnum):
    """The supported index structures ("auto": flat, then HNSW past `auto_graph_threshold`)."""

    AUTO = "auto"
    FLAT = "flat"
    HNSW = "hnsw"
    IVF_FLAT = "ivf_flat"


IVF_MIN_POINTS_PER_LIST = 39
"""FAISS k-means wants at least this many training points per list."""

IVF_AUTO_MIN_TRAIN = 1024
"""With `ivf_nlist=None`, vectors stay in a flat index until this many exist."""

AUTO_GRAPH_THRESHOLD = 10_000
"""An "auto" index is exact flat up to this many vectors and an HNSW graph past it. Chosen by
cost (benchmarks/dense/auto_graph.py: real python-faq MiniLM vectors, one thread, single-query
searches at k 50): a flat scan grows linearly, 0.16 / 0.32 / 0.82 / 2.3-2.6 ms at 2k / 5k / 10k /
19.5k vectors, while the graph (defaults below) costs 0.2-0.6 ms (0.61 at 19.5k). Up to 5k the exact scan
costs no more than the graph; from 10k it costs twice as much and more, and its 15 MB+ scan per
query competes for memory bandwidth with the query model. The add that crosses builds the graph
over the 10k vectors once (~3 s on one core at efConstruction 200)."""

HNSW_EF_PER_K = 5
"""A graph search's candidate list is max(`hnsw_ef_search`, HNSW_EF_PER_K * k), never narrower
than a multiple of what the request asks: 250 for the 50 candidates a default Retrieve asks for
(recall@50 against exact search 0.998 on the real python-faq vectors with efConstruction 200;
efSearch 100, what an earlier trial used, gave 0.986 and lost up to 0.012 MRR@10,
benchmarks/results/hnsw_quality.md), the spec's 64 for k <= 12."""


@dataclass(frozen=True, slots=True)
class DenseIndexSpec:
    """Which dense index to build.

    `kind`: "flat" (exact), "hnsw" (graph; `hnsw_m` links per node, `hnsw_ef_construction` and
    `hnsw_ef_search` candidate-list sizes), "ivf_flat" (`ivf_nlist` inverted lists, None to
    derive it from the data at training time; `ivf_nprobe` lists probed per query) or "auto"
    (the default of new collections: exact flat while it holds at most `auto_graph_threshold`
    vectors, an HNSW graph with the hnsw parameters once an add takes it past that; 0 = a graph
    from the first add).
    """

    kind: str = DenseKind.AUTO.value
    hnsw_m: int = 32
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = 64
    ivf_nlist: int | None = None
    ivf_nprobe: int = 16
    auto_graph_threshold: int = AUTO_GRAPH_THRESHOLD

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
        if self.auto_graph_threshold < 0:
            raise ValueError(f"auto_graph_threshold must be >= 0, got {self.auto_graph_threshold}")

    @property
    def dense_kind(self) -> DenseKind:
        """`kind` as the enum."""
        return DenseKind(self.kind)

    @property
    def staged(self) -> bool:
        """Whether the index starts as an exact flat stage and moves to another structure once
        it holds enough vectors (`leaves_flat_stage`): "ivf_flat" and "auto"."""
        return self.dense_kind in (DenseKind.IVF_FLAT, DenseKind.AUTO)

    def ef_search_for(self, k: int) -> int:
        """The candidate list of a graph search for the top `k` (`HNSW_EF_PER_K`)."""
        return max(self.hnsw_ef_search, HNSW_EF_PER_K * k)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (inverse: `from_json`)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DenseIndexSpec:
        """Rebuild a spec written by `to_json`."""
        return cls(**data)


def leaves_flat_stage(spec: DenseIndexSpec, count: int) -> bool:
    """Whether a staged index (`DenseIndexSpec.staged`) moves to its final structure once it
    holds `count` vectors: "ivf_flat" when it can train (`ivf_nlist_for`), "auto" past
    `auto_graph_threshold`."""
    if spec.dense_kind is DenseKind.IVF_FLAT:
        return ivf_nlist_for(spec, count) is not None
    if spec.dense_kind is DenseKind.AUTO:
        return count > spec.auto_graph_threshold
    return False


def is_flat_at(spec: DenseIndexSpec, count: int) -> bool:
    """Whether an index of `spec` holding `count` vectors is an exact flat structure, which a
    rebuild from the store makes fast (kind "flat", or a staged kind still in its stage)."""
    return spec.dense_kind is DenseKind.FLAT or (spec.staged and not leaves_flat_stage(spec, count))


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
