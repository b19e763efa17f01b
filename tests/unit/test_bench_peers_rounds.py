"""benchmarks/peers/rounds: rounds folded into medians, and QPS ratios taken within each round."""

from __future__ import annotations

from typing import Any

from benchmarks.peers.peers_table import markdown
from benchmarks.peers.rounds import (
    fold_rounds,
    groundwire_steps,
    ingest_rounds,
    peer_order,
    ratios,
    system_name,
)
from tests.unit.test_bench_peers_table import _record


def _row(system: str, qps: float, p99: float, errors: int = 0) -> dict[str, Any]:
    load = {"threads": 8, "calls": 10, "errors": errors, "qps": qps, "p50_ms": 5.0}
    return {"system": system, "recall@10": 0.8, "load": [{**load, "p99_ms": p99}]}


# the host slows down across the run: every system's QPS falls round by round
ROUNDS = [
    [_row("gw", 150.0, 80.0), _row("chroma", 50.0, 300.0)],
    [_row("gw", 120.0, 90.0, errors=1), _row("chroma", 40.0, 320.0)],
    [_row("gw", 90.0, 200.0), _row("chroma", 36.0, 310.0)],
]


def test_fold_takes_medians_keeps_every_rounds_qps_and_sums_counts() -> None:
    gw, chroma = fold_rounds(ROUNDS)
    assert gw["system"] == "gw" and gw["recall@10"] == 0.8
    assert gw["load"][0] == {
        "threads": 8,
        "calls": 30,
        "errors": 1,
        "qps_rounds": [150.0, 120.0, 90.0],
        "qps": 120.0,
        "p50_ms": 5.0,
        "p99_ms": 90.0,
    }
    assert chroma["load"][0]["qps"] == 40.0


def test_ratios_are_taken_within_each_round_then_their_median() -> None:
    got = ratios(ROUNDS, "chroma")
    # 150/50, 120/40, 90/36: the drift cancels within a round, not in the ratio of medians
    assert got == {"gw": [{"threads": 8, "rounds": [3.0, 3.0, 2.5], "median": 3.0}]}
    assert ratios(ROUNDS, "lancedb") == {}  # no reference measured: no ratios


def test_one_round_folds_to_itself() -> None:
    gw, _ = fold_rounds(ROUNDS[:1])
    assert gw["load"][0]["qps"] == 150.0 and gw["load"][0]["qps_rounds"] == [150.0]


def test_the_table_shows_every_rounds_qps_and_the_ratios() -> None:
    record = _record()
    names = [row["system"] for row in record["systems"]]
    rounds = [
        [
            {**row, "load": [{**row["load"][0], "qps": row["load"][0]["qps"] * scale}]}
            for row in record["systems"]
        ]
        for scale in (1.0, 0.5)
    ]
    record.update(
        rounds=2,
        reference="chroma-embedded",
        systems=fold_rounds(rounds),
        ratios=ratios(rounds, "chroma-embedded"),
    )
    text = markdown(record)
    assert names == [row["system"] for row in record["systems"]]
    assert "| groundwire-default (ghz) | 105.0 (140.0 / 70.0) |" in text
    assert "2 rounds (groundwire first in odd rounds" in text
    assert "QPS as a multiple of chroma-embedded's in the same round (median of the 2" in text
    assert "| groundwire-default | 2.0 (2.0 / 2.0) |" in text
    assert "| groundwire-default (ghz) | 3.11 (3.11 / 3.11) |" in text


PEERS = ["chroma-embedded", "chroma-http", "lancedb"]


def _round_order(groundwire_first: bool, reference: str) -> list[str]:
    """Every measurement of one round in time order (lancedb measures three systems)."""
    groundwire = [system_name(mode, driver) for mode, driver in groundwire_steps(groundwire_first)]
    peers: list[str] = []
    for peer in peer_order(PEERS, reference, groundwire_first):
        peers += (
            [f"lancedb-{k}" for k in ("vector", "fts", "hybrid")] if peer == "lancedb" else [peer]
        )
    return groundwire + peers if groundwire_first else peers + groundwire


def test_the_headline_pair_is_measured_back_to_back_in_both_orders() -> None:
    for groundwire_first in (True, False):
        order = _round_order(groundwire_first, "chroma-embedded")
        at = order.index("groundwire-default")
        assert abs(order.index("chroma-embedded") - at) == 1, order
        assert sorted(order) == sorted(_round_order(not groundwire_first, "chroma-embedded"))
    # another reference moves next to groundwire instead; the other peers keep their order
    assert peer_order(PEERS, "lancedb-vector", True) == [
        "lancedb",
        "chroma-embedded",
        "chroma-http",
    ]
    assert peer_order(PEERS, "lancedb-vector", False) == [
        "chroma-embedded",
        "chroma-http",
        "lancedb",
    ]


def _probed(share: float, raw: float) -> list[dict[str, Any]]:
    """One round's rows: groundwire's with an ingest probe against the raw model, a peer's."""
    probe = {
        "chunks_per_s": round(share * raw, 2),
        "raw_encode": {"chunks_per_s": raw},
        "end_to_end_share_of_raw": share,
    }
    gw = {**_row("groundwire-default", 100.0, 50.0), "ingest": probe}
    return [gw, {**_row("chroma", 40.0, 300.0), "ingest": {"docs_per_s_with_embedding": 9.0}}]


def test_every_rounds_ingest_probe_is_kept_with_the_median_share() -> None:
    folded = ingest_rounds([_probed(0.89, 37.0), _probed(1.03, 38.0), _probed(1.01, 42.0)])
    assert folded == {
        "rounds": 3,
        "chunks_per_s": [32.93, 39.14, 42.42],
        "raw_chunks_per_s": [37.0, 38.0, 42.0],
        "share_of_raw": [0.89, 1.03, 1.01],
        "median_share_of_raw": 1.01,
    }
    record = {**_record(), "ingest_rounds": folded}
    assert (
        "The probe in each of the 3 rounds (a fresh server each): 32.93 / 39.14 / 42.42 chunks/s "
        "end to end against the raw model's 37 / 38 / 42, 89% / 103% / 101% of raw (median 101%)."
    ) in markdown(record)
    # rounds without a probe against the raw model (an older run, or none) add no sentence
    assert ingest_rounds(ROUNDS) is None
    assert ingest_rounds([[{**_row("gw", 1.0, 1.0), "ingest": {"chunks_per_s": 1.0}}]]) is None
    assert "The probe in each" not in markdown({**_record(), "ingest_rounds": None})
