"""`@rpc(...)`: a servicer method declares the proto RPC it implements and what that RPC requires.

Each declaration names the RPC, the least role allowed to call it and whether it needs a loaded
server (model and indexes). server/handlers.py builds the handler tables from the proto service
descriptors and refuses to start when an RPC of the proto has no declared implementation.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from server.principal import Role

_ATTRIBUTE = "__groundwire_rpc__"
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class RpcPolicy:
    """What one RPC requires: the caller's least role, and whether the server must be loaded."""

    role: Role
    needs_loaded: bool


@dataclass(frozen=True, slots=True)
class Implementation:
    """A bound servicer method implementing the RPC `name`."""

    name: str
    behavior: Callable[..., Any]
    policy: RpcPolicy

    @property
    def streams_responses(self) -> bool:
        """True for an async generator (a server-streaming RPC)."""
        return inspect.isasyncgenfunction(self.behavior)


def rpc(name: str, role: Role, *, needs_loaded: bool) -> Callable[[F], F]:
    """Mark a servicer method as the implementation of the proto RPC `name`.

    `needs_loaded`: True when the RPC uses the model, the indexes or the opened collections, so a
    server still loading answers UNAVAILABLE (checked once, at the edge, before the method runs).
    """

    def declare(method: F) -> F:
        setattr(method, _ATTRIBUTE, (name, RpcPolicy(role, needs_loaded)))
        return method

    return declare


def implementations(servicers: Iterable[object]) -> dict[str, Implementation]:
    """The declared RPC implementations of `servicers`, by RPC name (ValueError on a duplicate)."""
    found: dict[str, Implementation] = {}
    for servicer in servicers:
        for attribute in dir(type(servicer)):
            declared = getattr(getattr(type(servicer), attribute), _ATTRIBUTE, None)
            if declared is None:
                continue
            name, policy = declared
            if name in found:
                raise ValueError(f"RPC {name} is implemented twice; keep one @rpc({name!r}, ...)")
            found[name] = Implementation(name, getattr(servicer, attribute), policy)
    return found
