"""CrossEncoderReranker on CUDA (fp16 weights) against the same tiny model on CPU (fp32).

Skipped without a CUDA device. Tolerance: logits within 2e-2 of the CPU logits; the relevant
passage of each training triple still scores above the unrelated one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.retrieve.rerank.cross_encoder import CrossEncoderReranker
from tests.tiny_cross_encoder import TRIPLES, build_tiny_cross_encoder

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"))


def test_fp16_on_cuda_agrees_with_fp32_on_cpu(model_dir: Path) -> None:
    cpu = CrossEncoderReranker(str(model_dir), device="cpu")
    cuda = CrossEncoderReranker(str(model_dir), device="cuda", batch_size=2)
    assert cuda.device.startswith("cuda")
    for query, relevant, unrelated in TRIPLES:
        on_gpu = cuda.score(query, [unrelated, relevant])
        assert on_gpu == pytest.approx(cpu.score(query, [unrelated, relevant]), abs=2e-2)
        assert on_gpu[1] > on_gpu[0]
