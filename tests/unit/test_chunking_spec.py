"""Tests of `ChunkingSpec` validation, the ChunkingOptions conversion at the edge, and the
chunking a collection config records (including configs written before it had a chunker kind)."""

from __future__ import annotations

import json

import pytest

from core.catalog.collection_config import CollectionConfig
from core.errors import FieldViolation, InvalidArgument
from core.ingest.chunking_spec import ChunkerKind, ChunkingSpec
from groundwire.v1 import index_service_pb2 as ix
from server.index_validation import chunking_spec

DEFAULT = ChunkingSpec(ChunkerKind.STRUCTURE, 200, 20)


def test_defaults() -> None:
    assert ChunkingSpec() == DEFAULT


@pytest.mark.parametrize(
    ("kind", "max_tokens", "overlap"),
    [
        (ChunkerKind.FIXED, 32, 0),
        (ChunkerKind.FIXED, 1024, 1023),
        (ChunkerKind.SENTENCE, 128, 20),
        (ChunkerKind.STRUCTURE, 64, 63),
    ],
    ids=["fixed-smallest", "fixed-largest", "sentence", "structure"],
)
def test_valid_specs(kind: ChunkerKind, max_tokens: int, overlap: int) -> None:
    spec = ChunkingSpec(kind, max_tokens, overlap)

    assert (spec.kind, spec.max_tokens, spec.overlap_tokens) == (kind, max_tokens, overlap)


@pytest.mark.parametrize(
    ("arguments", "violations"),
    [
        pytest.param(
            (ChunkerKind.FIXED, 31, 0),
            [("chunking.max_tokens", "must be between 32 and 1024 tokens; got 31")],
            id="too-small",
        ),
        pytest.param(
            (ChunkerKind.FIXED, 1025, 20),
            [("chunking.max_tokens", "must be between 32 and 1024 tokens; got 1025")],
            id="too-large",
        ),
        pytest.param(
            (ChunkerKind.FIXED, True, 0),
            [("chunking.max_tokens", "must be between 32 and 1024 tokens; got True")],
            id="bool",
        ),
        pytest.param(
            (ChunkerKind.FIXED, 200, 200),
            [
                (
                    "chunking.overlap_tokens",
                    "must be smaller than chunking.max_tokens (200); got 200",
                )
            ],
            id="overlap-equal",
        ),
        pytest.param(
            (ChunkerKind.SENTENCE, 200, -1),
            [("chunking.overlap_tokens", "must be 0 or more; got -1")],
            id="overlap-negative",
        ),
        pytest.param(
            ("fixed", 16, 20),
            [
                ("chunking.kind", "must be one of structure, fixed, sentence; got 'fixed'"),
                ("chunking.max_tokens", "must be between 32 and 1024 tokens; got 16"),
                (
                    "chunking.overlap_tokens",
                    "must be smaller than chunking.max_tokens (16); got 20",
                ),
            ],
            id="everything",
        ),
    ],
)
def test_invalid_specs_name_each_field(
    arguments: tuple[object, object, object], violations: list[tuple[str, str]]
) -> None:
    with pytest.raises(InvalidArgument) as caught:
        ChunkingSpec(*arguments)  # type: ignore[arg-type]

    assert caught.value.violations == tuple(FieldViolation(f, d) for f, d in violations)
    assert str(caught.value) == "; ".join(f"{f}: {d}" for f, d in violations)


# ---- ChunkingOptions at the edge --------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param(ix.ChunkingOptions(), DEFAULT, id="unset"),
        pytest.param(
            ix.ChunkingOptions(kind=ix.CHUNKER_KIND_FIXED, max_tokens=128, overlap_tokens=16),
            ChunkingSpec(ChunkerKind.FIXED, 128, 16),
            id="fixed",
        ),
        pytest.param(
            ix.ChunkingOptions(kind=ix.CHUNKER_KIND_SENTENCE, max_tokens=96),
            ChunkingSpec(ChunkerKind.SENTENCE, 96, 20),
            id="sentence-default-overlap",
        ),
        pytest.param(
            ix.ChunkingOptions(kind=ix.CHUNKER_KIND_STRUCTURE, overlap_tokens=0),
            ChunkingSpec(ChunkerKind.STRUCTURE, 200, 0),
            id="structure-no-overlap",
        ),
    ],
)
def test_options_become_a_spec(options: ix.ChunkingOptions, expected: ChunkingSpec) -> None:
    assert chunking_spec(options, DEFAULT) == expected


def test_unset_options_take_the_collection_default() -> None:
    default = ChunkingSpec(ChunkerKind.SENTENCE, 300, 30)

    assert chunking_spec(ix.ChunkingOptions(max_tokens=100), default) == ChunkingSpec(
        ChunkerKind.SENTENCE, 100, 30
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            ix.ChunkingOptions(kind=ix.CHUNKER_KIND_FIXED, max_tokens=200, overlap_tokens=200),
            "chunking.overlap_tokens: must be smaller than chunking.max_tokens (200); got 200",
            id="overlap",
        ),
        pytest.param(
            ix.ChunkingOptions(max_tokens=2000),
            "chunking.max_tokens: must be between 32 and 1024 tokens; got 2000",
            id="size",
        ),
        pytest.param(
            ix.ChunkingOptions(kind=7, max_tokens=16),  # type: ignore[arg-type]
            "chunking.kind: unknown ChunkerKind value 7; use one of CHUNKER_KIND_STRUCTURE, "
            "CHUNKER_KIND_FIXED, CHUNKER_KIND_SENTENCE; "
            "chunking.max_tokens: must be between 32 and 1024 tokens; got 16; "
            "chunking.overlap_tokens: must be smaller than chunking.max_tokens (16); got 20",
            id="everything",
        ),
    ],
)
def test_bad_options_are_reported_by_field(options: ix.ChunkingOptions, message: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        chunking_spec(options, DEFAULT)

    assert str(caught.value) == message


# ---- the collection's default chunking --------------------------------------------------------


def test_a_config_round_trips_its_chunking() -> None:
    config = CollectionConfig(
        chunk_max_tokens=128, chunker_kind=ChunkerKind.FIXED, chunk_overlap_tokens=16
    )

    restored = CollectionConfig.from_json(config.to_json())

    assert restored == config
    assert restored.chunking == ChunkingSpec(ChunkerKind.FIXED, 128, 16)
    assert json.loads(config.to_json())["chunker_kind"] == "fixed"


def test_a_config_written_before_chunker_kinds_reads_as_structure() -> None:
    old = {
        "chunk_max_tokens": 256,
        "dense": {
            "hnsw_ef_construction": 80,
            "hnsw_ef_search": 64,
            "hnsw_m": 32,
            "ivf_nlist": None,
            "ivf_nprobe": 16,
            "kind": "flat",
        },
        "description": "runbooks",
        "embedding_dim": 384,
        "embedding_model": "all-MiniLM-L6-v2",
    }

    config = CollectionConfig.from_json(json.dumps(old))

    assert config.chunking == ChunkingSpec(ChunkerKind.STRUCTURE, 256, 20)
    assert config.description == "runbooks"
