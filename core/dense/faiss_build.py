"""Construction, training and inspection of the FAISS structures behind `FaissIndex`."""

from __future__ import annotations

from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from core.dense.spec import DenseIndexSpec, DenseKind, ivf_nlist_for

_UNTYPED_FAISS: Any = faiss  # for the names faiss' stubs lack (SearchParametersHNSW, DirectMap)

FloatArray = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]


def new_index(spec: DenseIndexSpec, dimension: int) -> faiss.Index:
    """An empty index for `spec`: IDMap2(FlatIP), IDMap2(HNSWFlat IP), or for the staged kinds
    ("ivf_flat", "auto") the IDMap2(FlatIP) stage that holds vectors until `grown_index`."""
    if spec.dense_kind is DenseKind.HNSW:
        return new_graph(spec, dimension)
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))


def new_graph(spec: DenseIndexSpec, dimension: int) -> faiss.Index:
    """An empty IDMap2(HNSWFlat, inner product) with the spec's hnsw parameters."""
    graph = faiss.IndexHNSWFlat(dimension, spec.hnsw_m, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efConstruction = spec.hnsw_ef_construction
    graph.hnsw.efSearch = spec.hnsw_ef_search
    return faiss.IndexIDMap2(graph)


def grown_index(spec: DenseIndexSpec, row_ids: IdArray, vectors: FloatArray) -> faiss.Index:
    """The final structure of a staged kind holding `row_ids` / `vectors` (every vector of the
    stage plus the batch that took it past its threshold, `core.dense.spec.leaves_flat_stage`): a trained
    IVF-Flat for "ivf_flat", an HNSW graph for "auto"."""
    if spec.dense_kind is DenseKind.AUTO:
        graph = new_graph(spec, vectors.shape[1])
        graph.add_with_ids(vectors, row_ids)
        return graph
    nlist = ivf_nlist_for(spec, row_ids.size)
    assert spec.dense_kind is DenseKind.IVF_FLAT and nlist is not None
    return train_ivf(spec, nlist, row_ids, vectors)


def configure(index: faiss.Index, spec: DenseIndexSpec) -> None:
    """Apply the spec's search-time parameters (after creation or loading)."""
    if isinstance(index, faiss.IndexIVFFlat):
        index.nprobe = min(spec.ivf_nprobe, index.nlist)
    elif is_graph(index):
        hnsw_graph(index).hnsw.efSearch = spec.hnsw_ef_search


def is_graph(index: faiss.Index) -> bool:
    """Whether `index` is an IDMap2 over an HNSW graph (kind "hnsw", or "auto" past its stage)."""
    if isinstance(index, faiss.IndexIVFFlat):
        return False
    return isinstance(faiss.downcast_index(id_map(index).index), faiss.IndexHNSWFlat)


def id_map(index: faiss.Index) -> faiss.IndexIDMap2:
    """`index` as the IDMap2 wrapper it is (flat, HNSW and staged IVF indexes)."""
    wrapper = faiss.downcast_index(index)
    assert isinstance(wrapper, faiss.IndexIDMap2)
    return wrapper


def hnsw_graph(index: faiss.Index) -> faiss.IndexHNSWFlat:
    """The HNSW index inside an IDMap2 wrapper."""
    graph = faiss.downcast_index(id_map(index).index)
    assert isinstance(graph, faiss.IndexHNSWFlat)
    return graph


def search_parameters(selector: faiss.IDSelector) -> faiss.SearchParameters:
    """Plain search parameters restricting results to `selector`."""
    params = faiss.SearchParameters()
    params.sel = selector
    return params


def ivf_parameters(selector: faiss.IDSelector, nprobe: int) -> faiss.SearchParameters:
    """IVF search parameters probing `nprobe` lists, restricted to `selector`."""
    params = faiss.SearchParametersIVF()
    params.sel = selector
    params.nprobe = nprobe
    return params


def hnsw_parameters(selector: faiss.IDSelector | None, ef_search: int) -> faiss.SearchParameters:
    """HNSW search parameters with candidate list `ef_search`, restricted to `selector` (None:
    every id)."""
    params = _UNTYPED_FAISS.SearchParametersHNSW()
    if selector is not None:
        params.sel = selector
    params.efSearch = ef_search
    assert isinstance(params, faiss.SearchParameters)
    return params


def train_ivf(
    spec: DenseIndexSpec, nlist: int, row_ids: IdArray, vectors: FloatArray
) -> faiss.IndexIVFFlat:
    """Train an IVF-Flat (inner product) index with `nlist` lists on `vectors` and add them.

    The direct map is a hash table so vectors can be removed and reconstructed by row id.
    """
    dimension = vectors.shape[1]
    # index_factory already returns the concrete class; downcasting it again would let the
    # owning proxy be garbage-collected and free the index under us.
    ivf = faiss.index_factory(dimension, f"IVF{nlist},Flat", faiss.METRIC_INNER_PRODUCT)
    assert isinstance(ivf, faiss.IndexIVFFlat)
    ivf.train(vectors)
    ivf.set_direct_map_type(_UNTYPED_FAISS.DirectMap.Hashtable)
    ivf.add_with_ids(vectors, row_ids)
    configure(ivf, spec)
    return ivf


def id_map_ids(index: faiss.Index) -> IdArray:
    """Row ids of an IDMap2 index, in internal (storage) order."""
    return np.asarray(faiss.vector_to_array(id_map(index).id_map), dtype=np.int64)


def id_map_contents(index: faiss.Index) -> tuple[IdArray, FloatArray]:
    """(row ids, vectors) of every entry of an IDMap2 index over flat storage."""
    ids = id_map_ids(index)
    if ids.size == 0:
        return ids, np.zeros((0, index.d), dtype=np.float32)
    storage = faiss.downcast_index(id_map(index).index)
    vectors = storage.reconstruct_n(0, ids.size)
    return ids, np.asarray(vectors, dtype=np.float32)


def contains(index: faiss.Index, row_id: int) -> bool:
    """Whether an IDMap2 index holds `row_id` (tombstoned entries included)."""
    try:
        id_map(index).reconstruct(int(row_id))
    except RuntimeError:
        return False
    return True


def estimate_bytes(index: faiss.Index, spec: DenseIndexSpec) -> int:
    """Approximate resident size: vectors, id maps and, for HNSW, the graph links."""
    count, dimension = int(index.ntotal), int(index.d)
    vector_bytes = count * dimension * 4
    if isinstance(index, faiss.IndexIVFFlat):
        centroid_bytes = int(index.nlist) * dimension * 4
        return vector_bytes + count * (8 + 48) + centroid_bytes  # list ids + hash-table entry
    id_bytes = count * (8 + 48)  # id_map vector + rev_map hash-table entry
    if is_graph(index):
        # level 0 holds 2*M links per node; upper levels add about 1/M of that again.
        link_bytes = count * 2 * spec.hnsw_m * 4 * (1 + 1 / spec.hnsw_m) + count * 16
        return vector_bytes + id_bytes + int(link_bytes)
    return vector_bytes + id_bytes
