"""Tests of `select_device`, with CUDA presence simulated by monkeypatching torch.cuda."""

from __future__ import annotations

import pytest
import torch

from core.embed.device import DeviceChoice, select_device
from core.errors import FieldViolation, InvalidArgument


@pytest.fixture
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without a visible CUDA device."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


@pytest.fixture
def two_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with two visible CUDA devices."""
    names = ["NVIDIA H100 80GB HBM3", "NVIDIA L4"]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: len(names))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: names[index])


@pytest.mark.parametrize(
    "setting", [pytest.param("cpu", id="lower"), pytest.param(" CPU ", id="padded-upper")]
)
@pytest.mark.usefixtures("two_gpus")
def test_cpu_is_honoured_even_with_a_gpu(setting: str) -> None:
    assert select_device(setting) == DeviceChoice("cpu", 'device = "cpu" requested')


@pytest.mark.usefixtures("no_cuda")
def test_auto_without_cuda_picks_cpu() -> None:
    assert select_device("auto") == DeviceChoice("cpu", "no CUDA device visible; using CPU")


@pytest.mark.usefixtures("two_gpus")
def test_auto_with_cuda_picks_cuda() -> None:
    assert select_device("auto") == DeviceChoice("cuda", "CUDA device NVIDIA H100 80GB HBM3 found")


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        pytest.param(
            "cuda", DeviceChoice("cuda", "CUDA device NVIDIA H100 80GB HBM3 found"), id="cuda"
        ),
        pytest.param("cuda:1", DeviceChoice("cuda:1", "CUDA device NVIDIA L4 found"), id="cuda-1"),
    ],
)
@pytest.mark.usefixtures("two_gpus")
def test_explicit_cuda_device(setting: str, expected: DeviceChoice) -> None:
    assert select_device(setting) == expected


@pytest.mark.parametrize(
    "setting", [pytest.param("cuda", id="cuda"), pytest.param("cuda:0", id="cuda-0")]
)
@pytest.mark.usefixtures("no_cuda")
def test_cuda_without_a_device_is_rejected(setting: str) -> None:
    with pytest.raises(InvalidArgument) as raised:
        select_device(setting)

    description = (
        f'"{setting}" requested but no CUDA device is visible; set device = "cpu" or "auto"'
    )
    assert str(raised.value) == f"device: {description}"
    assert raised.value.violations == (FieldViolation("device", description),)


@pytest.mark.usefixtures("two_gpus")
def test_a_cuda_index_past_the_visible_devices_is_rejected() -> None:
    with pytest.raises(InvalidArgument) as raised:
        select_device("cuda:2")

    assert str(raised.value) == (
        'device: "cuda:2" requested but only 2 CUDA device(s) are visible (indexes 0 to 1)'
    )


@pytest.mark.parametrize(
    "setting",
    [
        pytest.param("gpu", id="gpu"),
        pytest.param("mps", id="mps"),
        pytest.param("cuda:x", id="cuda-letter"),
        pytest.param("cuda:", id="cuda-colon"),
        pytest.param("", id="empty"),
    ],
)
def test_unknown_settings_are_rejected(setting: str) -> None:
    with pytest.raises(InvalidArgument) as raised:
        select_device(setting)

    assert str(raised.value) == (
        f"device: unknown device {setting!r}; "
        'use "auto", "cpu", "cuda" or "cuda:N" (N a device index)'
    )
    assert raised.value.violations[0].field == "device"


def test_auto_on_this_machine_matches_torch() -> None:
    choice = select_device("auto")

    assert choice.device == ("cuda" if torch.cuda.is_available() else "cpu")
