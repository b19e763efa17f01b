"""Several processes' registries as one exposition (server/telemetry/family_merge.py and
process_metrics.py): real registries, a real reader endpoint over HTTP, the output parsed back
with prometheus_client's own parser."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator, Mapping
from wsgiref.simple_server import WSGIServer

import pytest
from prometheus_client import CollectorRegistry, generate_latest, start_wsgi_server
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics import exposition as openmetrics
from prometheus_client.openmetrics import parser as openmetrics_parser
from prometheus_client.parser import text_string_to_metric_families

from server.telemetry.family_merge import PROCESS_LABEL, labelled_families
from server.telemetry.process_metrics import ProcessMetrics
from server.telemetry.server_metrics import ServerMetrics
from tests.metric_scrape import parse_samples

SERVICE = "groundwire.v1.RetrievalService"
HANDLED = "grpc_server_handled_total"
HANDLING = "grpc_server_handling_seconds"


class _Families:
    """A collector yielding fixed families."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        yield from self._families


class _Ports:
    """A fixed `ReaderMetricsPorts`."""

    def __init__(self, ports: Mapping[int, int | None]) -> None:
        self._ports = ports

    def metrics_ports(self) -> Mapping[int, int | None]:
        return self._ports


def _process(retrieves: list[float]) -> ServerMetrics:
    """A process's metrics after Retrieve calls lasting `retrieves` seconds."""
    metrics = ServerMetrics()
    for seconds in retrieves:
        metrics.rpc_started("unary", SERVICE, "Retrieve")
        metrics.rpc_finished("unary", SERVICE, "Retrieve", "OK", seconds)
    metrics.stage_finished("retrieve", "embed", 0.002)
    return metrics


def _exposed(families: list[Metric]) -> str:
    registry = CollectorRegistry()
    registry.register(_Families(families))
    return generate_latest(registry).decode()


def _samples(text: str, name: str) -> dict[frozenset[tuple[str, str]], float]:
    return {labels: value for (got, labels), value in parse_samples(text).items() if got == name}


def _type_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("# TYPE ")]


def test_two_registries_merge_into_one_labelled_exposition() -> None:
    primary, reader = _process([0.003, 0.2]), _process([0.003, 0.003, 7.0])
    # the reader's families as the primary reads them off its endpoint
    reader_text = openmetrics.generate_latest(reader.registry).decode()
    reader_families = list(openmetrics_parser.text_string_to_metric_families(reader_text))
    merged = _exposed(labelled_families([(0, primary.registry.collect()), (1, reader_families)]))

    types = _type_lines(merged)
    assert len(types) == len(set(types)), "one TYPE line per family"
    assert f"# TYPE {HANDLED} counter" in types
    helps = [line for line in merged.splitlines() if line.startswith("# HELP ")]
    assert len(helps) == len(set(helps)) == len(types)
    ok = {
        "grpc_type": "unary",
        "grpc_service": SERVICE,
        "grpc_method": "Retrieve",
        "grpc_code": "OK",
    }
    assert _samples(merged, HANDLED) == {
        frozenset({**ok, PROCESS_LABEL: "0"}.items()): 2.0,
        frozenset({**ok, PROCESS_LABEL: "1"}.items()): 3.0,
    }
    # each process's histogram buckets unchanged, only labelled
    for number, metrics in ((0, primary), (1, reader)):
        alone = generate_latest(metrics.registry).decode()
        for suffix in ("_bucket", "_count", "_sum"):
            expected = {
                frozenset({**dict(labels), PROCESS_LABEL: str(number)}.items()): value
                for labels, value in _samples(alone, HANDLING + suffix).items()
            }
            got = {
                labels: value
                for labels, value in _samples(merged, HANDLING + suffix).items()
                if (PROCESS_LABEL, str(number)) in labels
            }
            assert got == expected, (number, suffix)
    buckets = _samples(merged, HANDLING + "_bucket")
    assert buckets[frozenset({**ok, "le": "+Inf", PROCESS_LABEL: "1"}.items())] == 3.0
    assert buckets[frozenset({**ok, "le": "0.005", PROCESS_LABEL: "1"}.items())] == 2.0
    # every sample of every family carries its process
    for family in text_string_to_metric_families(merged):
        for sample in family.samples:
            assert sample.labels[PROCESS_LABEL] in ("0", "1"), sample


def test_the_merged_families_expose_in_openmetrics_too() -> None:
    """Prometheus asks for OpenMetrics: the strict parser reads the merged exposition back."""
    reader_text = openmetrics.generate_latest(_process([0.01]).registry).decode()
    reader_families = openmetrics_parser.text_string_to_metric_families(reader_text)
    primary = _process([0.01, 0.02]).registry.collect()
    registry = CollectorRegistry()
    registry.register(_Families(labelled_families([(0, primary), (1, reader_families)])))
    text = openmetrics.generate_latest(registry).decode()
    families = {f.name: f for f in openmetrics_parser.text_string_to_metric_families(text)}
    handled = families["grpc_server_handled"]
    assert handled.type == "counter"
    assert {
        (s.name, s.labels[PROCESS_LABEL]): s.value
        for s in handled.samples
        if s.name.endswith("_total")
    } == {(HANDLED, "0"): 2.0, (HANDLED, "1"): 1.0}
    assert {s.labels[PROCESS_LABEL] for s in handled.samples if s.name.endswith("_created")} == {
        "0",
        "1",
    }


def test_merging_leaves_the_input_families_alone() -> None:
    families = list(_process([0.01]).registry.collect())
    before = [(f.name, [s.labels.copy() for s in f.samples]) for f in families]
    labelled_families([(0, families), (1, families)])
    assert [(f.name, [s.labels for s in f.samples]) for f in families] == before


@pytest.fixture
def reader_endpoint() -> Iterator[tuple[int, ServerMetrics]]:
    metrics = _process([0.01, 0.01, 0.01])
    endpoint: WSGIServer
    endpoint, _ = start_wsgi_server(0, addr="127.0.0.1", registry=metrics.registry)
    yield endpoint.server_port, metrics
    endpoint.shutdown()
    endpoint.server_close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_the_primary_scrapes_readers_and_leaves_out_those_not_answering(
    reader_endpoint: tuple[int, ServerMetrics], caplog: pytest.LogCaptureFixture
) -> None:
    port, _ = reader_endpoint
    primary = _process([0.01])
    collector = ProcessMetrics(primary.registry)
    collector.readers = _Ports({1: port, 2: None, 3: _closed_port()})
    exposed = CollectorRegistry()
    exposed.register(collector)

    with caplog.at_level(logging.WARNING, logger="server.telemetry.process_metrics"):
        first = generate_latest(exposed).decode()
        second = generate_latest(exposed).decode()

    for text in (first, second):
        handled = _samples(text, HANDLED)
        by_process = {dict(labels)[PROCESS_LABEL]: value for labels, value in handled.items()}
        assert by_process == {"0": 1.0, "1": 3.0}
        assert _samples(text, "groundwire_metrics_processes_scraped") == {frozenset(): 2.0}
    left_out = sorted(r.getMessage() for r in caplog.records)
    assert len(left_out) == 2, "one warning per reader left out, not one per scrape"
    assert left_out[0] == (
        "metrics: reader process 2 left out of the scrape: not serving (starting or restarting)"
    )
    assert left_out[1].startswith("metrics: reader process 3 left out of the scrape: URLError")
