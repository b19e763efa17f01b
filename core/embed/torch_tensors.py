"""Query vectors that may be torch tensors, told apart without importing torch.

A GPU embedder hands back query vectors as tensors on its device; every other embedder (ONNX on
a CPU, as in a reader process) hands back NumPy arrays and never loads torch. Code that accepts
either asks `is_tensor` instead of `isinstance(value, torch.Tensor)`: a process that has not
imported torch holds no tensor, so the answer is False without importing it (torch's import
costs a process hundreds of MiB of resident memory).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypeGuard

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import torch

FloatArray = npt.NDArray[np.float32]


def is_tensor(value: object) -> TypeGuard[torch.Tensor]:
    """Whether `value` is a torch tensor; False, without importing torch, when torch is not
    loaded (no tensor can exist then)."""
    loaded = sys.modules.get("torch")
    return loaded is not None and isinstance(value, loaded.Tensor)


def host_float32(values: FloatArray | torch.Tensor) -> FloatArray:
    """`values` as float32 host values: a tensor is copied off its device (its shape kept); an
    array is returned as float32 (itself when it already is)."""
    if is_tensor(values):
        import torch

        host: FloatArray = values.detach().to(device="cpu", dtype=torch.float32).numpy()
        return host
    return np.asarray(values, dtype=np.float32)
