"""Who is calling: a tenant and a role, set once per RPC and read by the servicers."""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from enum import IntEnum

from core.catalog.catalog import DEFAULT_TENANT
from core.errors import PermissionDenied

__all__ = [
    "DEFAULT_TENANT",
    "LOCAL_ADMIN",
    "Principal",
    "Role",
    "current_principal",
    "principal_var",
]


class Role(IntEnum):
    """Ordered roles: each one may do everything the ones below it may."""

    READER = 1  # Retrieve, Answer, GetDocument, ListCollections, Stats, ListSnapshots
    WRITER = 2  # + UpsertDocuments, DeleteDocuments, AddMemories, ClearCache
    ADMIN = 3  # + Create/DropCollection, Compact, Snapshot, Restore, DeleteSnapshot, HIGH risk

    @classmethod
    def parse(cls, name: str) -> Role:
        """The role named `name` (reader, writer or admin); ValueError otherwise."""
        try:
            return cls[name.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown role {name!r}; use reader, writer or admin") from None


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated caller. `key_id` names the API key (never the secret)."""

    tenant: str
    role: Role
    key_id: str

    def require(self, role: Role, action: str) -> None:
        """Raise PermissionDenied unless this principal has at least `role`."""
        if self.role < role:
            raise PermissionDenied(
                f"{action} requires the {role.name.lower()} role; the key {self.key_id!r} has "
                f"the {self.role.name.lower()} role. Use a key with the {role.name.lower()} role"
            )


LOCAL_ADMIN = Principal(DEFAULT_TENANT, Role.ADMIN, "auth-disabled")
"""The caller when authentication is switched off: the embedded default's single user."""

principal_var: contextvars.ContextVar[Principal] = contextvars.ContextVar(
    "principal", default=LOCAL_ADMIN
)


def current_principal() -> Principal:
    """The principal of the RPC being served (set by the handler wrapper)."""
    return principal_var.get()
