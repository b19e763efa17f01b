"""Which int8 weight type gives exact integer products on this CPU (per-token int8 queries).

onnxruntime's u8 x s8 `MatMulInteger` is exact on x86 processors with VNNI (`vpdpbusd` sums
four byte products straight into 32 bits). Without VNNI (AVX2 only: AMD Zen 1-3, Intel Skylake
and older) it runs on `vpmaddubsw`, which adds two byte products into a *saturated* 16-bit lane
first: per-token activations sit around the 128 zero point, so two products of ~128 x 127 already
reach the 32,767 limit and outlier weights are clipped. Measured on a Zen 3 host
(benchmarks/results/int8_queries.md, "Without VNNI"): per-token int8 with signed weights reached
mean cosine 0.99696 to fp32 on 1,043 real questions (0.99768 on a VNNI host, same recipe), and
retrieval fell below fp32 queries by 0.0075 / 0.0099 MRR@10 (default / dense) on python-faq and
0.0051 / 0.0037 on r-faq, outside the 0.005 bar.

u8 x u8 runs on multiply-adds that widen to 16 bits before they add, so it never saturates:
unsigned weights (the int8 values shifted by 128, zero point 128) give the exact products on this
host too (tests/unit/test_per_token_int8.py checks it on whatever host runs it), at some speed cost
without VNNI. So: signed weights where VNNI makes them exact (and fastest), unsigned everywhere
else, including any CPU whose flags cannot be read.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
EXACT_SIGNED_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})
"""Linux CPU flags whose presence makes onnxruntime's u8 x s8 kernels exact (VNNI / AMX)."""


class WeightSign(str, Enum):  # noqa: UP042 - same base as the other domain enums
    """How per-token int8 stores a MatMul's weights."""

    SIGNED = "s8"
    """int8 weights, zero point 0: exact and fastest with VNNI, saturating without."""
    UNSIGNED = "u8"
    """int8 weights + 128 as uint8, zero point 128: exact on every CPU."""


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The first processor's flags in `cpuinfo` (Linux); empty when it cannot be read."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def exact_weight_sign(flags: frozenset[str] | None = None) -> WeightSign:
    """The weight type whose int8 products are exact on this CPU (`flags`: `cpu_flags()`)."""
    found = cpu_flags() if flags is None else flags
    return WeightSign.SIGNED if found & EXACT_SIGNED_FLAGS else WeightSign.UNSIGNED
