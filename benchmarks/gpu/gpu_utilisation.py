"""Sample how busy the GPU is while a load runs: NVML through torch, else `nvidia-smi`."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import threading
from collections.abc import Callable

import torch


def _torch_reader(device: int) -> Callable[[], float] | None:
    try:
        torch.cuda.utilization(device)  # needs the NVML bindings (pynvml / nvidia-ml-py)
    except Exception:
        return None
    return lambda: float(torch.cuda.utilization(device))


def _smi_reader(device: int) -> Callable[[], float] | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    command = [
        smi,
        f"--id={device}",
        "--query-gpu=utilization.gpu",
        "--format=csv,noheader,nounits",
    ]

    def read() -> float:
        return float(subprocess.run(command, capture_output=True, text=True, check=True).stdout)

    try:
        read()
    except Exception:
        return None
    return read


class UtilisationSampler:
    """Samples GPU utilisation (% of time a kernel was running) every `interval_s` in a thread.

    `mean_percent()` is None when no CUDA device or no way to read NVML is available.
    """

    def __init__(self, device: str, interval_s: float = 0.1) -> None:
        index = int(device.partition(":")[2] or 0)
        on_cuda = device.startswith("cuda") and torch.cuda.is_available()
        self._read = (_torch_reader(index) or _smi_reader(index)) if on_cuda else None
        self._interval_s = interval_s
        self._samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gpu-util", daemon=True)

    def __enter__(self) -> UtilisationSampler:
        if self._read is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def mean_percent(self) -> float | None:
        """Mean utilisation over the samples taken, or None when nothing could be read."""
        return round(statistics.fmean(self._samples), 1) if self._samples else None

    def _run(self) -> None:
        assert self._read is not None
        while not self._stop.wait(self._interval_s):
            try:
                self._samples.append(self._read())
            except Exception:
                return
