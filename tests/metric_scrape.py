"""GET a server's Prometheus endpoint and index its samples, for the metrics tests."""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
"""Every sample's value by (sample name, its labels)."""


@dataclass(frozen=True, slots=True)
class Scrape:
    """One GET of /metrics: its content type, text and samples."""

    content_type: str
    text: str
    samples: Samples


def scrape(port: int, timeout_s: float = 30.0) -> Scrape:
    """GET http://127.0.0.1:`port`/metrics and parse it (the Prometheus text format)."""
    url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(url, timeout=timeout_s) as reply:
        content_type = str(reply.headers["Content-Type"])
        text = reply.read().decode("utf-8")
    return Scrape(content_type, text, parse_samples(text))


def parse_samples(text: str) -> Samples:
    """Every sample of a Prometheus text exposition by (name, labels)."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
