"""`RetrievalCache`: store-sequence invalidation, tenant separation, request fingerprints."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.cache.fingerprint import cache_text_key, dataclass_fingerprint
from core.cache.lru_ttl import CacheStats
from core.cache.retrieval_cache import RetrievalCache, ScopeStats
from core.catalog.version import CollectionVersion
from core.context.assembly import ContextBudget
from core.models import ChunkDraft, Document, SourceType
from core.retrieve.expansion_policy import ExpansionPolicy
from core.retrieve.filters import ChunkFilter, MetadataRange
from core.retrieve.request import RetrievalRequest
from core.store.sqlite_store import SqliteStore

REPO_ROOT = Path(__file__).resolve().parents[2]
SCOPE_FIELDS = {"tenant", "collection", "query"}

# Alternatives for fields whose default gives no generic way to derive a different value.
EXPLICIT_ALTERNATIVES: dict[str, Any] = {
    "candidate_depth": 77,
    "score_threshold": 0.25,
    "filters": ChunkFilter(has_code=True),
    "budget": ContextBudget(max_chars=5000),
    "rerank_depth": 12,
    "expansion": ExpansionPolicy(enabled=True),
    "mmr_lambda": 0.5,
}
FILTER_ALTERNATIVES: dict[str, Any] = {
    "document_ids": frozenset({"guide"}),
    "source_types": frozenset({SourceType.PDF}),
    "has_code": False,
    "section_prefix": ("Setup",),
    "metadata_equals": {"team": "infra"},
    "metadata_ranges": (MetadataRange("year", minimum=2020.0),),
    "metadata_in": {"lang": frozenset({"en"})},
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def v(sequence: int, incarnation: str = "first", memories: int = 0) -> CollectionVersion:
    return CollectionVersion(incarnation, sequence, memories)


def request(**changes: Any) -> RetrievalRequest:
    return dataclasses.replace(RetrievalRequest(query="rotate keys", collection="docs"), **changes)


def alternative(name: str, value: Any) -> Any:
    """A value of the same kind as `value` that differs from it."""
    if name in EXPLICIT_ALTERNATIVES:
        return EXPLICIT_ALTERNATIVES[name]
    if isinstance(value, Enum):
        return next(member for member in type(value) if member is not value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "-other"
    raise AssertionError(f"add an alternative for RetrievalRequest.{name} to EXPLICIT_ALTERNATIVES")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cache(clock: FakeClock) -> RetrievalCache[str]:
    return RetrievalCache(ttl_s=60.0, max_entries=100, clock=clock)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore.open(tmp_path / "store.sqlite3")
    yield opened
    opened.close()


def upsert(store: SqliteStore, document_id: str) -> None:
    document = Document(document_id, "text")
    vectors = np.ones((1, 4), dtype=np.float32)
    store.upsert_document(document, document.content_hash(), [ChunkDraft("chunk")], vectors)


# ---- sequence invalidation ----------------------------------------------------------------------


def test_result_is_served_until_a_write_bumps_the_store_sequence(
    cache: RetrievalCache[str], store: SqliteStore
) -> None:
    upsert(store, "guide")
    before = store.sequence()
    assert cache.get(request(), v(before)) is None
    assert cache.put(request(), v(before), "result with guide")
    assert cache.get(request(), v(store.sequence())) == "result with guide"

    store.delete_documents(["guide"])
    assert store.sequence() > before
    assert cache.get(request(), v(store.sequence())) is None
    assert cache.stats("default", "docs") == ScopeStats(hits=1, misses=2, entries=0)


@pytest.mark.parametrize("write", ["upsert", "delete"])
def test_any_write_makes_every_older_entry_a_miss(
    cache: RetrievalCache[str], store: SqliteStore, write: str
) -> None:
    upsert(store, "guide")
    sequence = store.sequence()
    queries = ["first question", "second question", "third question"]
    for query in queries:
        cache.put(request(query=query), v(sequence), query)
    if write == "upsert":
        upsert(store, "another")
    else:
        store.delete_documents(["guide"])
    assert [cache.get(request(query=q), v(store.sequence())) for q in queries] == [None] * 3


def test_put_refuses_a_result_older_than_a_sequence_already_seen(
    cache: RetrievalCache[str],
) -> None:
    assert cache.get(request(), v(6)) is None  # someone already saw the store at 6
    assert cache.put(request(), v(5), "computed before the write") is False
    assert cache.get(request(), v(5)) is None
    assert cache.put(request(), v(6), "current") is True
    assert cache.get(request(), v(6)) == "current"


def test_a_new_incarnation_at_a_reused_sequence_is_a_miss(cache: RetrievalCache[str]) -> None:
    """Drop + create, or a restore: the new store may reach the same sequence number again."""
    assert cache.get(request(), v(1, "dropped")) is None
    assert cache.put(request(), v(1, "dropped"), "the dropped document")
    assert cache.get(request(), v(1, "dropped")) == "the dropped document"
    assert cache.get(request(), v(1, "re-created")) is None
    assert cache.get(request(), v(1, "dropped")) is None  # met with another version: dropped
    assert cache.stats("default", "docs").entries == 0


def test_a_result_put_from_a_replaced_incarnation_is_never_served(
    cache: RetrievalCache[str],
) -> None:
    """A retrieval in flight across a restore stores its old result: no current lookup gets it."""
    assert cache.get(request(), v(3, "restored")) is None
    cache.put(request(), v(7, "before restore"), "in flight across the restore")
    assert cache.get(request(), v(3, "restored")) is None
    assert cache.get(request(), v(7, "restored")) is None
    assert cache.put(request(), v(7, "restored"), "current") is True
    assert cache.get(request(), v(7, "restored")) == "current"


def test_added_memories_make_a_miss(cache: RetrievalCache[str]) -> None:
    cache.put(request(use_memory=True), v(4, memories=2), "two memories")
    assert cache.get(request(use_memory=True), v(4, memories=3)) is None
    assert cache.put(request(use_memory=True), v(4, memories=2), "stale") is False


# ---- keys ---------------------------------------------------------------------------------------


def test_tenants_and_collections_never_share_entries(cache: RetrievalCache[str]) -> None:
    cache.put(request(tenant="acme"), v(1), "acme docs")
    cache.put(request(tenant="globex"), v(1), "globex docs")
    cache.put(request(tenant="acme", collection="notes"), v(1), "acme notes")
    assert cache.get(request(tenant="acme"), v(1)) == "acme docs"
    assert cache.get(request(tenant="globex"), v(1)) == "globex docs"
    assert cache.get(request(tenant="acme", collection="notes"), v(1)) == "acme notes"
    assert cache.get(request(tenant="initech"), v(1)) is None
    keys = {cache.key_for(request(tenant=t)) for t in ("acme", "globex", "initech")}
    assert len(keys) == 3


def test_query_key_collapses_whitespace_but_keeps_case(cache: RetrievalCache[str]) -> None:
    assert cache.key_for(request(query="  rotate \n keys ")) == cache.key_for(request())
    assert cache.key_for(request(query="Rotate keys")) != cache.key_for(request())
    assert cache_text_key("\ta  b\u2003c ") == "a b c"


def test_equal_requests_built_differently_have_the_same_key(cache: RetrievalCache[str]) -> None:
    first = request(
        filters=ChunkFilter(
            document_ids=frozenset(["b", "a", "c"]),
            metadata_equals={"x": "1", "y": "2"},
            metadata_in={"lang": frozenset(["en", "de"])},
        )
    )
    second = request(
        filters=ChunkFilter(
            document_ids=frozenset(["c", "a", "b"]),
            metadata_equals={"y": "2", "x": "1"},
            metadata_in={"lang": frozenset(["de", "en"])},
        )
    )
    assert first == second
    assert cache.key_for(first) == cache.key_for(second)


@pytest.mark.parametrize(
    "name",
    [f.name for f in dataclasses.fields(RetrievalRequest) if f.name not in SCOPE_FIELDS],
)
def test_every_request_field_changes_the_key(cache: RetrievalCache[str], name: str) -> None:
    base = request()
    changed = dataclasses.replace(base, **{name: alternative(name, getattr(base, name))})
    assert getattr(changed, name) != getattr(base, name)
    assert cache.key_for(changed).params != cache.key_for(base).params


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(ChunkFilter)])
def test_every_filter_field_changes_the_key(cache: RetrievalCache[str], name: str) -> None:
    assert set(FILTER_ALTERNATIVES) == {f.name for f in dataclasses.fields(ChunkFilter)}
    changed = request(filters=ChunkFilter(**{name: FILTER_ALTERNATIVES[name]}))
    assert cache.key_for(changed) != cache.key_for(request())


def test_types_are_part_of_the_fingerprint() -> None:
    @dataclasses.dataclass(frozen=True)
    class Value:
        value: object

    digests = {dataclass_fingerprint(Value(v)) for v in (1, 1.0, True, "1", None, (1,), b"1")}
    assert len(digests) == 7


def test_fingerprint_is_the_same_in_another_process() -> None:
    value = request(
        filters=ChunkFilter(
            document_ids=frozenset(f"doc-{i}" for i in range(20)),
            source_types=frozenset(SourceType),
            metadata_in={"tag": frozenset(f"t{i}" for i in range(20))},
        )
    )
    script = (
        "import json, sys\n"
        "from core.cache.fingerprint import dataclass_fingerprint\n"
        "from core.context.assembly import ContextBudget\n"
        "from core.models import SourceType\n"
        "from core.retrieve.filters import ChunkFilter\n"
        "from core.retrieve.request import RetrievalRequest\n"
        "f = ChunkFilter(document_ids=frozenset(f'doc-{i}' for i in range(20)),\n"
        "    source_types=frozenset(SourceType),\n"
        "    metadata_in={'tag': frozenset(f't{i}' for i in range(20))})\n"
        "r = RetrievalRequest(query='rotate keys', collection='docs', filters=f)\n"
        "print(json.dumps(dataclass_fingerprint(r, ('tenant', 'collection', 'query'))))\n"
    )
    digests = {
        json.loads(
            subprocess.run(
                [sys.executable, "-c", script],
                cwd=REPO_ROOT,
                env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for seed in ("1", "2")
    }
    assert digests == {dataclass_fingerprint(value, ("tenant", "collection", "query"))}


def test_fingerprint_rejects_what_it_cannot_encode() -> None:
    @dataclasses.dataclass(frozen=True)
    class Odd:
        thing: object

    with pytest.raises(TypeError) as error:
        dataclass_fingerprint(Odd(object))
    assert str(error.value) == "cannot fingerprint a value of type type: <class 'object'>"
    with pytest.raises(ValueError) as unknown:
        dataclass_fingerprint(request(), exclude=("nope",))
    assert str(unknown.value) == "cannot exclude unknown fields ['nope'] of RetrievalRequest"


# ---- bounds, clearing, counters -----------------------------------------------------------------


def test_entries_expire_and_the_least_recent_is_evicted(clock: FakeClock) -> None:
    cache: RetrievalCache[str] = RetrievalCache(ttl_s=60.0, max_entries=2, clock=clock)
    for query in ("a", "b", "c"):
        cache.put(request(query=query), v(1), query)
    assert cache.get(request(query="a"), v(1)) is None
    assert cache.get(request(query="c"), v(1)) == "c"
    clock.now = 60.0
    assert cache.get(request(query="c"), v(1)) is None
    assert cache.totals() == CacheStats(hits=1, misses=2, evictions=1, expirations=2, entries=0)


def test_clear_one_collection_or_every_collection_of_a_tenant(
    cache: RetrievalCache[str],
) -> None:
    for tenant in ("acme", "globex"):
        for collection in ("docs", "notes"):
            cache.put(request(tenant=tenant, collection=collection), v(1), "v")
            cache.get(request(tenant=tenant, collection=collection), v(1))
    assert cache.clear("acme", "docs") == 1
    assert cache.stats("acme", "docs") == ScopeStats(hits=0, misses=0, entries=0)
    assert cache.stats("acme", "notes") == ScopeStats(hits=1, misses=0, entries=1)
    assert cache.clear("acme") == 1
    assert cache.stats("acme", "notes") == ScopeStats(hits=0, misses=0, entries=0)
    assert cache.stats("globex", "docs") == ScopeStats(hits=1, misses=0, entries=1)
    assert cache.clear_all() == 2
    assert cache.stats("globex", "docs") == ScopeStats(hits=0, misses=0, entries=0)
