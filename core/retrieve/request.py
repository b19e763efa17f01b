"""The retrieval request and result as plain domain objects."""

from __future__ import annotations

from dataclasses import dataclass

from core.context.assembly import AssembledContext, ContextBudget
from core.models import Hit, RiskLevel
from core.retrieve.expansion_policy import ExpansionPolicy
from core.retrieve.filters import ChunkFilter
from core.retrieve.fusion import FusionMethod
from core.retrieve.modes import RetrievalMode
from core.retrieve.section_scores import SECTION_WEIGHT


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    """A validated, normalised retrieval request."""

    query: str
    collection: str
    tenant: str = "default"
    top_k: int = 10
    mode: RetrievalMode = RetrievalMode.HYBRID
    fusion: FusionMethod = FusionMethod.WEIGHTED
    rrf_k: int = 60
    dense_weight: float = 1.0
    lexical_weight: float = 0.25
    candidate_depth: int | None = None
    filters: ChunkFilter = ChunkFilter()
    max_risk: RiskLevel = RiskLevel.MEDIUM
    score_threshold: float | None = None
    budget: ContextBudget = ContextBudget(max_tokens=2000)
    rerank: bool = False
    rerank_depth: int | None = None
    expansion: ExpansionPolicy = ExpansionPolicy()
    use_memory: bool = False
    section_weight: float = SECTION_WEIGHT
    """Share of a chunk's dense score taken from its section vector (`section_scores`)."""
    score_lexical_candidates: bool = False
    """Hybrid: give the chunks only BM25 found their exact dense score before fusion
    (`lexical_candidates`); False (the default) counts them 0 on the dense side."""
    max_hits_per_document: int = 0
    """At most this many hits of one document before other documents' (`diversity`); 0 = no limit."""
    mmr_lambda: float | None = None
    """Reorder the hits by maximal marginal relevance with this lambda in [0, 1]; None = off."""

    @property
    def depth(self) -> int:
        """Candidates taken from each retriever before fusion."""
        return self.candidate_depth or max(50, 5 * self.top_k)

    @property
    def rerank_window(self) -> int:
        """Fused hits the reranker sees (the final list is cut to top_k afterwards)."""
        return self.rerank_depth or 3 * self.top_k

    @property
    def diversifies(self) -> bool:
        """Whether the hits are reordered for diversity (per-document limit or MMR)."""
        return self.max_hits_per_document > 0 or (
            self.mmr_lambda is not None and self.mmr_lambda < 1.0
        )


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """Ranked hits, the assembled context and how they were obtained."""

    hits: tuple[Hit, ...]
    context: AssembledContext
    collection: str
    mode: RetrievalMode
    fusion: FusionMethod | None
    applied_filters: tuple[str, ...]
    total_candidates: int
    timings: tuple[tuple[str, float], ...]
    warnings: tuple[str, ...]
    cache_hit: bool = False
    embedding_cache_hit: bool = False
    keywords: tuple[str, ...] = ()
    query_tokens: int = 0
