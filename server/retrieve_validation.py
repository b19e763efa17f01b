"""Validation of RetrieveRequest: proto in, domain RetrievalRequest out, or InvalidArgument."""

from __future__ import annotations

import math
from collections.abc import Mapping

from core.catalog.collection_config import validate_collection_name
from core.context.assembly import ContextBudget
from core.errors import FieldViolation, InvalidArgument
from core.models import RiskLevel
from core.retrieve.diversity import validate_mmr_lambda
from core.retrieve.expansion_policy import (
    ExpansionPolicy,
    ExpansionStrategy,
    parse_edge_kinds,
)
from core.retrieve.filters import ChunkFilter, MetadataRange
from core.retrieve.query_text import normalize_query
from core.retrieve.request import RetrievalRequest
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import retrieval_service_pb2 as rs
from server.enum_maps import (
    EXPANSION_STRATEGIES,
    FUSIONS,
    MODES,
    RISKS,
    SOURCE_TYPES,
    enum_violation,
)
from server.settings import RetrievalSettings

MAX_FILTER_VALUES = 10_000
MAX_CANDIDATE_DEPTH = 1000


def validate_retrieve(
    message: rs.RetrieveRequest, settings: RetrievalSettings, default_collection: str
) -> RetrievalRequest:
    """Check every field; all violations are reported together."""
    violations: list[FieldViolation] = []
    query = _checked(violations, lambda: normalize_query(message.query, settings.max_query_chars))
    collection = message.collection or default_collection
    _checked(violations, lambda: validate_collection_name(collection))
    top_k = message.top_k if message.HasField("top_k") else settings.default_top_k
    if not 1 <= top_k <= settings.max_top_k:
        violations.append(
            FieldViolation("top_k", f"must be between 1 and {settings.max_top_k}; got {top_k}")
        )
    hybrid = message.hybrid
    mode = _enum(violations, "hybrid.mode", hybrid.mode, MODES, "RetrievalMode", settings.mode)
    fusion = _enum(
        violations, "hybrid.fusion", hybrid.fusion, FUSIONS, "FusionMethod", settings.fusion
    )
    max_risk = _enum(
        violations, "max_risk_level", message.max_risk_level, RISKS, "RiskLevel", RiskLevel.MEDIUM
    )
    rrf_k = hybrid.rrf_k if hybrid.HasField("rrf_k") else settings.rrf_k
    if rrf_k < 1:
        violations.append(FieldViolation("hybrid.rrf_k", "must be >= 1 (60 is the usual choice)"))
    weights = [
        _weight(violations, "hybrid.dense_weight", hybrid, "dense_weight", settings.dense_weight),
        _weight(
            violations, "hybrid.lexical_weight", hybrid, "lexical_weight", settings.lexical_weight
        ),
    ]
    depth = hybrid.candidate_depth if hybrid.HasField("candidate_depth") else None
    if depth is not None and not 1 <= depth <= MAX_CANDIDATE_DEPTH:
        violations.append(
            FieldViolation("hybrid.candidate_depth", f"must be between 1 and {MAX_CANDIDATE_DEPTH}")
        )
    threshold = message.score_threshold if message.HasField("score_threshold") else None
    if threshold is not None and not math.isfinite(threshold):
        violations.append(FieldViolation("score_threshold", "must be a finite number"))
    filters = _filters(violations, message.filters)
    budget = _budget(violations, message, settings)
    expansion = _checked(violations, lambda: _expansion(violations, message.expansion))
    if message.rerank.HasField("depth") and not 1 <= message.rerank.depth <= 200:
        violations.append(FieldViolation("rerank.depth", "must be between 1 and 200"))
    mmr_lambda = message.mmr_lambda if message.HasField("mmr_lambda") else settings.mmr_lambda
    _checked(violations, lambda: validate_mmr_lambda(mmr_lambda))  # NaN fails too
    per_document = (
        message.max_hits_per_document
        if message.HasField("max_hits_per_document")
        else settings.max_hits_per_document
    )
    if not 0 <= per_document <= 100:
        violations.append(
            FieldViolation(
                "max_hits_per_document",
                f"must be between 0 and 100 (0 = no limit); got {per_document}",
            )
        )
    if violations:
        raise InvalidArgument(
            "; ".join(f"{v.field}: {v.description}" for v in violations), tuple(violations)
        )
    assert query is not None and budget is not None
    return RetrievalRequest(
        query=query,
        collection=collection,
        top_k=top_k,
        mode=mode,
        fusion=fusion,
        rrf_k=rrf_k,
        dense_weight=weights[0],
        lexical_weight=weights[1],
        candidate_depth=depth,
        filters=filters,
        max_risk=max_risk,
        score_threshold=threshold,
        budget=budget,
        rerank=message.rerank.enabled,
        rerank_depth=message.rerank.depth if message.rerank.HasField("depth") else None,
        expansion=expansion or ExpansionPolicy(),
        use_memory=message.use_memory,
        section_weight=settings.section_weight,
        score_lexical_candidates=settings.score_lexical_candidates,
        mmr_lambda=None if mmr_lambda == 1.0 else mmr_lambda,
        max_hits_per_document=per_document,
    )


def _checked(violations: list[FieldViolation], check):  # type: ignore[no-untyped-def]
    try:
        return check()
    except InvalidArgument as exc:
        violations.extend(exc.violations)
        return None


def _enum(violations, field, value, mapping: Mapping[int, object], name, default):  # type: ignore[no-untyped-def]
    if value == 0:
        return default
    if value not in mapping:
        violations.append(enum_violation(field, value, mapping, name))
        return default
    return mapping[value]


def _weight(
    violations: list[FieldViolation],
    field: str,
    hybrid: rs.HybridParams,
    name: str,
    default: float,
) -> float:
    if not hybrid.HasField(name):
        return default
    value = float(getattr(hybrid, name))
    if not math.isfinite(value) or value < 0:
        violations.append(FieldViolation(field, "must be a finite number >= 0"))
        return default
    return value


def _budget(
    violations: list[FieldViolation], message: rs.RetrieveRequest, settings: RetrievalSettings
) -> ContextBudget | None:
    which = message.budget.WhichOneof("limit")
    if which is None:
        return ContextBudget(max_tokens=settings.default_budget_tokens)
    value = getattr(message.budget, which)
    cap = settings.max_budget_tokens if which == "max_tokens" else settings.max_budget_chars
    if not 1 <= value <= cap:
        violations.append(
            FieldViolation(f"budget.{which}", f"must be between 1 and {cap}; got {value}")
        )
        return None
    return (
        ContextBudget(max_tokens=value) if which == "max_tokens" else ContextBudget(max_chars=value)
    )


def _filters(violations: list[FieldViolation], message: common.Filters) -> ChunkFilter:
    types = []
    for i, value in enumerate(message.source_types):
        if value not in SOURCE_TYPES:
            violations.append(
                enum_violation(f"filters.source_types[{i}]", value, SOURCE_TYPES, "SourceType")
            )
        else:
            types.append(SOURCE_TYPES[value])
    if len(message.document_ids) > MAX_FILTER_VALUES:
        violations.append(
            FieldViolation("filters.document_ids", f"at most {MAX_FILTER_VALUES} ids")
        )
    ranges = []
    for i, rng in enumerate(message.metadata_ranges):
        low = rng.min if rng.HasField("min") else None
        high = rng.max if rng.HasField("max") else None
        bad = [b for b in (low, high) if b is not None and not math.isfinite(b)]
        if not rng.key or bad or (low is not None and high is not None and low > high):
            violations.append(
                FieldViolation(
                    f"filters.metadata_ranges[{i}]", "needs a key and finite bounds with min <= max"
                )
            )
        ranges.append(MetadataRange(rng.key, low, high))
    membership = {}
    for i, cond in enumerate(message.metadata_in):
        if not cond.key or not cond.values:
            violations.append(
                FieldViolation(f"filters.metadata_in[{i}]", "needs a key and at least one value")
            )
        membership[cond.key] = frozenset(cond.values)
    return ChunkFilter(
        document_ids=frozenset(message.document_ids),
        source_types=frozenset(types),
        has_code=message.has_code if message.HasField("has_code") else None,
        section_prefix=tuple(message.section_path_prefix),
        metadata_equals=dict(message.metadata_equals),
        metadata_ranges=tuple(ranges),
        metadata_in=membership,
    )


_STRATEGIES = {
    rs.EXPANSION_STRATEGY_UNSPECIFIED: ExpansionStrategy.BASIC,
    rs.EXPANSION_STRATEGY_BASIC: ExpansionStrategy.BASIC,
    rs.EXPANSION_STRATEGY_WEIGHTED: ExpansionStrategy.WEIGHTED,
    rs.EXPANSION_STRATEGY_TYPE_AWARE: ExpansionStrategy.TYPE_AWARE,
    rs.EXPANSION_STRATEGY_SMART: ExpansionStrategy.SMART,
}


def _expansion(violations: list[FieldViolation], policy: rs.ExpansionPolicy) -> ExpansionPolicy:
    """The domain policy; range errors come from ExpansionPolicy itself, naming the field."""
    before = len(violations)
    _check_expansion(violations, policy)
    if len(violations) > before:
        return ExpansionPolicy()
    values: dict[str, object] = {
        name: getattr(policy, name)
        for name in ("max_per_hit", "max_total", "hops", "score_discount", "min_edge_weight")
        if policy.HasField(name)
    }
    return ExpansionPolicy(
        enabled=policy.enabled,
        strategy=_STRATEGIES[policy.strategy],
        preferred_edge_types=parse_edge_kinds(list(policy.preferred_edge_types)),
        **values,  # type: ignore[arg-type]
    )


def _check_expansion(violations: list[FieldViolation], policy: rs.ExpansionPolicy) -> None:
    if policy.strategy not in EXPANSION_STRATEGIES:
        violations.append(
            enum_violation(
                "expansion.strategy",
                policy.strategy,
                dict.fromkeys(EXPANSION_STRATEGIES - {0}),
                "ExpansionStrategy",
            )
        )
    if policy.HasField("hops") and not 1 <= policy.hops <= 3:
        violations.append(FieldViolation("expansion.hops", "must be between 1 and 3"))
    if policy.HasField("score_discount") and not 0 < policy.score_discount <= 1:
        violations.append(FieldViolation("expansion.score_discount", "must be in (0, 1]"))
