"""The memory score, as pure vectorised functions.

    score      = importance * retention * (0.3 + 0.7 * relevance)
    retention  = exp(-decay_rate * hours_since / importance_factor)
    importance_factor = 1 + 9 * importance        (important memories fade up to 10x slower)
    relevance  = 0.7 * max(cosine, 0) + 0.3 * keyword_overlap
    keyword_overlap = |query keywords & memory keywords| / |query keywords|   (0 with no keywords)

`hours_since` is (now - timestamp) in hours, floored at 0 (a memory dated in the future has not
faded). `decay_rate` is per hour. Half-life = ln 2 * importance_factor / decay_rate hours: at the
default 0.01 per hour that is 5.5 days for importance 0.1, 15.9 days for 0.5 and 28.9 days for 1.
Every score is in [0, 1] for importance in (0, 1] and relevance in [0, 1].
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

DEFAULT_DECAY_RATE_PER_HOUR = 0.01
COSINE_WEIGHT = 0.7
KEYWORD_WEIGHT = 0.3
RELEVANCE_FLOOR = 0.3
RELEVANCE_SPAN = 0.7
IMPORTANCE_FADE_SPAN = 9.0
MS_PER_HOUR = 3_600_000.0


def importance_factor(importance: FloatArray) -> FloatArray:
    """1 + 9 * importance: divides the decay rate, so importance 1 fades 10x slower than ~0."""
    return 1.0 + IMPORTANCE_FADE_SPAN * importance


def retention(hours_since: FloatArray, importance: FloatArray, decay_rate: float) -> FloatArray:
    """exp(-decay_rate * max(hours_since, 0) / importance_factor(importance)), in (0, 1]."""
    return np.exp(-decay_rate * np.maximum(hours_since, 0.0) / importance_factor(importance))


def relevance(cosine: FloatArray, overlap: FloatArray) -> FloatArray:
    """0.7 * max(cosine, 0) + 0.3 * overlap, in [0, 1] for cosine <= 1 and overlap in [0, 1]."""
    return COSINE_WEIGHT * np.clip(cosine, 0.0, 1.0) + KEYWORD_WEIGHT * overlap


def memory_scores(
    importance: FloatArray,
    timestamp_ms: FloatArray,
    cosine: FloatArray,
    overlap: FloatArray,
    now_ms: int,
    decay_rate: float,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(score, relevance, retention) per memory; all arguments are float64 arrays of shape (n,)."""
    kept = retention((now_ms - timestamp_ms) / MS_PER_HOUR, importance, decay_rate)
    related = relevance(cosine, overlap)
    return importance * kept * (RELEVANCE_FLOOR + RELEVANCE_SPAN * related), related, kept
