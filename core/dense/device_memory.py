"""Device memory figures for Stats: what the torch allocator holds on a CUDA device."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """Bytes allocated and reserved by torch on a device, and the device's total memory.

    All zero for "cpu". FAISS GPU indexes allocate outside torch, so they are not counted here;
    their size is in the collection's `dense_memory_bytes`.
    """

    allocated: int
    reserved: int
    total: int


def device_memory(device: str) -> DeviceMemory:
    """Figures for a torch device string ("cpu", "cuda", "cuda:N")."""
    if not device.startswith("cuda"):
        return DeviceMemory(0, 0, 0)
    import torch  # only for a CUDA device: a process on the CPU never loads it for Stats

    if not torch.cuda.is_available():
        return DeviceMemory(0, 0, 0)
    target = torch.device(device)
    _, total = torch.cuda.mem_get_info(target)
    return DeviceMemory(
        int(torch.cuda.memory_allocated(target)), int(torch.cuda.memory_reserved(target)), total
    )
