"""core.embed.int8_weights: the weight sign whose int8 products this CPU computes exactly."""

from __future__ import annotations

from pathlib import Path

from core.embed.int8_weights import WeightSign, cpu_flags, exact_weight_sign

ZEN3 = "fpu vme sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2 sha_ni vaes"
SAPPHIRE_RAPIDS = ZEN3 + " avx512f avx512bw avx512_vnni amx_int8"


def _cpuinfo(tmp_path: Path, flags: str, key: str = "flags") -> Path:
    path = tmp_path / "cpuinfo"
    blocks = [f"processor\t: {i}\nmodel name\t: test\n{key}\t\t: {flags}\n" for i in range(2)]
    path.write_text("\n".join(blocks))
    return path


def test_flags_are_read_from_the_first_processor(tmp_path: Path) -> None:
    flags = cpu_flags(_cpuinfo(tmp_path, ZEN3))
    assert "avx2" in flags and "avx512_vnni" not in flags
    assert "asimddp" in cpu_flags(_cpuinfo(tmp_path, "fp asimd asimddp", key="Features"))


def test_unreadable_cpuinfo_gives_no_flags(tmp_path: Path) -> None:
    assert cpu_flags(tmp_path / "missing") == frozenset()
    (tmp_path / "empty").write_text("processor : 0\n")
    assert cpu_flags(tmp_path / "empty") == frozenset()


def test_signed_weights_only_where_vnni_makes_them_exact(tmp_path: Path) -> None:
    assert exact_weight_sign(cpu_flags(_cpuinfo(tmp_path, SAPPHIRE_RAPIDS))) is WeightSign.SIGNED
    assert exact_weight_sign(frozenset({"avx2", "avx_vnni"})) is WeightSign.SIGNED
    assert exact_weight_sign(cpu_flags(_cpuinfo(tmp_path, ZEN3))) is WeightSign.UNSIGNED
    assert exact_weight_sign(frozenset()) is WeightSign.UNSIGNED  # unknown CPU: the safe one
