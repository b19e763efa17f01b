"""Validation of AnswerRequest: proto in, domain AnswerRequest out, or InvalidArgument."""

from __future__ import annotations

import math
from collections.abc import Sequence

from core.answer.answer_service import AnswerRequest
from core.answer.protocol import GenerationParams
from core.errors import FieldViolation, InvalidArgument
from core.retrieve.request import RetrievalRequest
from groundwire.v1 import retrieval_service_pb2 as rs
from server.retrieve_validation import validate_retrieve
from server.settings import RetrievalSettings

MAX_ANSWER_TOKENS = 8192


def validate_answer(
    message: rs.AnswerRequest,
    settings: RetrievalSettings,
    default_collection: str,
    templates: Sequence[str],
) -> AnswerRequest:
    """Check every field; violations of the embedded RetrieveRequest are prefixed `retrieve.`."""
    violations: list[FieldViolation] = []
    retrieval: RetrievalRequest | None = None
    try:
        retrieval = validate_retrieve(message.retrieve, settings, default_collection)
    except InvalidArgument as exc:
        violations.extend(
            FieldViolation(f"retrieve.{v.field}", v.description) for v in exc.violations
        )
    if message.template and message.template not in templates:
        installed = ", ".join(sorted(templates))
        violations.append(
            FieldViolation(
                "template", f"unknown template {message.template[:64]!r}; installed: {installed}"
            )
        )
    temperature = message.temperature if message.HasField("temperature") else None
    if temperature is not None and not (math.isfinite(temperature) and 0 <= temperature <= 2):
        violations.append(FieldViolation("temperature", "must be between 0 and 2"))
    max_tokens = message.max_tokens if message.HasField("max_tokens") else None
    if max_tokens is not None and not 1 <= max_tokens <= MAX_ANSWER_TOKENS:
        violations.append(
            FieldViolation("max_tokens", f"must be between 1 and {MAX_ANSWER_TOKENS}")
        )
    if violations:
        raise InvalidArgument(
            "; ".join(f"{v.field}: {v.description}" for v in violations), tuple(violations)
        )
    assert retrieval is not None
    return AnswerRequest(
        retrieval=retrieval,
        template=message.template,
        params=GenerationParams(temperature=temperature, max_tokens=max_tokens),
        rewrite=message.rewrite,
    )
