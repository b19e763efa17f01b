"""One probe's record written as results/<name>.json and its table as results/<name>.md."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from benchmarks.ghz.run import RESULTS


def write_record(
    name: str, record: dict[str, Any], markdown: Callable[[dict[str, Any]], str]
) -> None:
    """Write `record` and `markdown(record)` under results/ as `name`.{json,md}; print the table."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    table = markdown(record)
    (RESULTS / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
    (RESULTS / f"{name}.md").write_text(table)
    print(table)
