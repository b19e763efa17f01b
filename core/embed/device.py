"""Choose the torch device a model runs on from the `device` setting.

torch is imported only to look for CUDA devices: "cpu" is chosen without it (a reader process on
a CPU host never loads torch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import InvalidArgument

_CUDA = re.compile(r"cuda(?::(?P<index>\d+))?")
_ACCEPTED = '"auto", "cpu", "cuda" or "cuda:N" (N a device index)'


@dataclass(frozen=True, slots=True)
class DeviceChoice:
    """The chosen torch device and a readable reason, for the startup log."""

    device: str
    reason: str


def select_device(setting: str) -> DeviceChoice:
    """The device for `setting`: "auto", "cpu", "cuda" or "cuda:N".

    "auto" picks "cuda" when a CUDA device is visible, else "cpu". Raises InvalidArgument (field
    "device") for an unknown value or for CUDA when no such device is visible.
    """
    normalised = setting.strip().lower()
    if normalised == "cpu":
        return DeviceChoice("cpu", 'device = "cpu" requested')
    if normalised == "auto":
        import torch

        if torch.cuda.is_available():
            return DeviceChoice("cuda", f"CUDA device {torch.cuda.get_device_name(0)} found")
        return DeviceChoice("cpu", "no CUDA device visible; using CPU")
    match = _CUDA.fullmatch(normalised)
    if match is None:
        raise InvalidArgument.field("device", f"unknown device {setting!r}; use {_ACCEPTED}")
    return _cuda_choice(normalised, int(match.group("index") or 0))


def _cuda_choice(device: str, index: int) -> DeviceChoice:
    """`device` if CUDA device `index` is visible, else InvalidArgument."""
    import torch

    if not torch.cuda.is_available():
        raise InvalidArgument.field(
            "device",
            f'"{device}" requested but no CUDA device is visible; set device = "cpu" or "auto"',
        )
    count = torch.cuda.device_count()
    if index >= count:
        raise InvalidArgument.field(
            "device",
            f'"{device}" requested but only {count} CUDA device(s) are visible '
            f"(indexes 0 to {count - 1})",
        )
    return DeviceChoice(device, f"CUDA device {torch.cuda.get_device_name(index)} found")
