"""The primary's metrics endpoint reporting every server process, each under its own label.

With `server.processes` above 1 each process counts in its own registry. Each reader serves its
registry on a free loopback port, which it reports to the primary on its link
(server/reader_supervisor.py); on each scrape of the configured `metrics.port` the primary
fetches every ready reader's exposition in parallel (at most `READER_SCRAPE_TIMEOUT_S`), and
returns its own series and theirs as one exposition in which every sample carries
`server_process` ("0" the primary, "1".. the readers; numbers stay the same across a reader's
restarts, pids do not) and families of one name are merged (server/telemetry/family_merge.py).
A reader that is restarting or does not answer in time is left out of that scrape (a warning
when a reader stops answering, once, and a note when it answers again);
`groundwire_metrics_processes_scraped` says how many processes the exposition holds.

A single process (processes = 1) serves its registry as before: no label, no gauge, so its
series and dashboards do not change. Readers are fetched in the OpenMetrics format and read
with prometheus_client's OpenMetrics parser, which gives back the very families the reader's
registry holds (a counter's `_created` stays in its family), so the primary re-exposes them
in either format Prometheus asks for. prometheus_client's multiprocess mode is not used: it
cannot aggregate the series sampled at scrape time (runtime_collector.py, the process and GC
collectors) nor report a reader's gauges once it restarted.
"""

from __future__ import annotations

import logging
import threading
import urllib.request
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Protocol

from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as OPENMETRICS
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.registry import Collector, CollectorRegistry

from server.telemetry.family_merge import labelled_families

logger = logging.getLogger(__name__)

READER_SCRAPE_TIMEOUT_S = 2.0
"""Longest wait for a reader's exposition during one scrape of the primary."""
NOT_SERVING = "not serving (starting or restarting)"
"""Why a reader not (yet) serving is left out."""


class ReaderMetricsPorts(Protocol):
    """Where the reader processes serve their metrics (ReaderSupervisor)."""

    def metrics_ports(self) -> Mapping[int, int | None]:
        """Reader number -> its loopback metrics port; None while it is not serving."""
        ...


class ProcessMetrics(Collector):
    """Collects the primary's `registry` and every reader's exposition, labelled by process."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry
        self.readers: ReaderMetricsPorts | None = None
        """Set by the primary once its readers exist; None: the primary alone."""
        self._left_out: set[int] = set()
        self._lock = threading.Lock()

    def collect(self) -> Iterator[Metric]:
        """Every process's families (called by the registry on each scrape)."""
        ports = dict(self.readers.metrics_ports()) if self.readers is not None else {}
        scraped = [(0, list(self._registry.collect()))]
        scraped += sorted(self._scrape_readers(ports).items())
        yield from labelled_families(scraped)
        count = GaugeMetricFamily(
            "groundwire_metrics_processes_scraped",
            "Server processes whose series this exposition holds (the primary and the readers "
            "that answered in time).",
        )
        count.add_metric([], float(len(scraped)))
        yield count

    def _scrape_readers(self, ports: Mapping[int, int | None]) -> dict[int, list[Metric]]:
        """The readers' families that arrived in time, by reader number."""
        answered: dict[int, list[Metric]] = {}
        failures = {number: NOT_SERVING for number, port in ports.items() if not port}
        serving = {number: port for number, port in ports.items() if port}
        if serving:
            pool = ThreadPoolExecutor(len(serving), thread_name_prefix="metrics-scrape")
            try:
                futures = {n: pool.submit(_reader_families, p) for n, p in serving.items()}
                wait(futures.values(), timeout=READER_SCRAPE_TIMEOUT_S)
            finally:
                pool.shutdown(wait=False, cancel_futures=True)
            for number, future in futures.items():
                outcome = _outcome(future)
                if isinstance(outcome, str):
                    failures[number] = outcome
                else:
                    answered[number] = outcome
        self._log_changes(set(answered), failures)
        return answered

    def _log_changes(self, answered: set[int], failures: Mapping[int, str]) -> None:
        """Warn when a reader starts being left out, note when it answers again: once per
        change, not on every scrape."""
        with self._lock:
            for number in answered & self._left_out:
                self._left_out.discard(number)
                logger.info("metrics: reader process %d answers scrapes again", number)
            for number, reason in failures.items():
                if number not in self._left_out:
                    self._left_out.add(number)
                    logger.warning(
                        "metrics: reader process %d left out of the scrape: %s", number, reason
                    )


def _reader_families(port: int) -> list[Metric]:
    """The families a reader's endpoint on 127.0.0.1:`port` serves now."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/metrics", headers={"Accept": OPENMETRICS}
    )
    with urllib.request.urlopen(request, timeout=READER_SCRAPE_TIMEOUT_S) as reply:
        text = reply.read().decode("utf-8")
    parsed: Iterator[Metric] = text_string_to_metric_families(text)  # type: ignore[no-untyped-call]
    return list(parsed)


def _outcome(future: Future[list[Metric]]) -> list[Metric] | str:
    """A reader's families, or why there are none."""
    if not future.done() or future.cancelled():
        return f"no answer within {READER_SCRAPE_TIMEOUT_S:g} s"
    error = future.exception()
    if error is not None:
        return f"{type(error).__name__}: {error}"
    return future.result()
