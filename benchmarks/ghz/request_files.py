"""ghz `--data-file` contents: a JSON array of requests, one per python-faq question.

ghz sends element `n % len(array)` as the n-th call of a unary or server-streaming method, so
the load cycles through every question in file order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RETRIEVE = "groundwire.v1.RetrievalService.Retrieve"
ANSWER = "groundwire.v1.RetrievalService.Answer"


@dataclass(frozen=True, slots=True)
class Workload:
    """One kind of call the benchmark sends."""

    name: str
    call: str
    mode: str  # RetrievalMode enum name, or "" for the server default (hybrid)


WORKLOADS = (
    Workload("retrieve-dense", RETRIEVE, "RETRIEVAL_MODE_DENSE"),
    Workload("retrieve-default", RETRIEVE, ""),
    Workload("answer-extractive", ANSWER, ""),
)


def load_questions(dataset: Path) -> list[str]:
    """The python-faq query texts in file order."""
    with (dataset / "queries.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line)["text"] for line in lines if line.strip()]


def retrieve_request(
    question: str, collection: str, mode: str, top_k: int, max_hits_per_document: int = 0
) -> dict[str, Any]:
    """A RetrieveRequest in protobuf JSON form (`max_hits_per_document` 0: the server's)."""
    request: dict[str, Any] = {"query": question, "collection": collection, "topK": top_k}
    if mode:
        request["hybrid"] = {"mode": mode}
    if max_hits_per_document:
        request["maxHitsPerDocument"] = max_hits_per_document
    return request


def requests_for(
    workload: Workload,
    questions: Sequence[str],
    collection: str,
    top_k: int = 10,
    max_hits_per_document: int = 0,
) -> list[dict[str, Any]]:
    """One request per question for `workload`."""
    retrieves = [
        retrieve_request(q, collection, workload.mode, top_k, max_hits_per_document)
        for q in questions
    ]
    if workload.call == ANSWER:
        return [{"retrieve": r} for r in retrieves]
    return retrieves


def write_data_file(path: Path, requests: Sequence[dict[str, Any]]) -> Path:
    """Write `requests` as the JSON array ghz reads with --data-file."""
    if not requests:
        raise ValueError("ghz needs at least one request")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(list(requests), ensure_ascii=False, indent=1) + "\n")
    return path
