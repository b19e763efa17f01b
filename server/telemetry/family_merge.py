"""Several processes' metric families as one exposition: each sample labelled with its process.

Pure: families in, new families out (the inputs are not modified). Families of one name from
different processes become one family (one HELP and TYPE line), its samples in process order;
histogram buckets, `_sum`, `_count` and `_created` samples keep their names and `le` labels, so
`sum by (...)` over the process label gives the server's totals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client.metrics_core import Metric

PROCESS_LABEL = "server_process"
"""The label naming a sample's process: "0" for the primary, "1".. for the readers."""


def labelled_families(processes: Sequence[tuple[int, Iterable[Metric]]]) -> list[Metric]:
    """(process number, its families) for each process -> one family per metric name, every
    sample carrying `PROCESS_LABEL` = its process number. A name's HELP, TYPE and unit are those
    of the first process exposing it."""
    merged: dict[str, Metric] = {}
    for number, families in processes:
        process = str(number)
        for family in families:
            target = merged.get(family.name)
            if target is None:
                target = Metric(family.name, family.documentation, family.type, family.unit)
                merged[family.name] = target
            target.samples.extend(
                sample._replace(labels={**sample.labels, PROCESS_LABEL: process})
                for sample in family.samples
            )
    return list(merged.values())
