"""GPU tier: every test here needs a CUDA device and is skipped cleanly without one."""

from __future__ import annotations

import pytest
import torch

NO_CUDA_REASON = "no CUDA device"


@pytest.fixture(autouse=True)
def require_cuda() -> None:
    """Skip the test when torch sees no CUDA device."""
    if not torch.cuda.is_available():
        pytest.skip(NO_CUDA_REASON)
