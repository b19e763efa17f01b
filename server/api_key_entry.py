"""One `[[keys]]` entry of the keys file: the rules for its fields and its TOML form.

The server's loader (server/api_keys.py) and `groundwire keygen` both go through `KeyEntry.parse`,
so keygen can never print an entry the server would read differently or refuse.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from server.principal import Role
from server.toml_strings import toml_basic_string

FIELDS = ("id", "tenant", "role", "sha256")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_TENANT = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
_HASH = re.compile(r"[0-9a-f]{64}")
_ROLES = {role.name.lower(): role for role in Role}


class KeyEntryError(ValueError):
    """A field of a key entry breaks its rule; `problem` says how and names the fix."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True, slots=True)
class KeyEntry:
    """A validated key entry: who the key is (`key_id`), whose it is and what it may do."""

    key_id: str
    tenant: str
    role: Role
    sha256: str

    @classmethod
    def parse(cls, key_id: object, tenant: object, role: object, sha256: object) -> KeyEntry:
        """Validate raw field values (from TOML or the command line); KeyEntryError otherwise."""
        return cls(
            _checked(
                "id",
                key_id,
                _ID,
                "use 1-63 characters of A-Z, a-z, 0-9, '.', '_' and '-', starting with a "
                "letter or digit",
            ),
            _checked("tenant", tenant, _TENANT, "use 1-63 characters of a-z, 0-9, '_' and '-'"),
            _role(role),
            _sha256(sha256),
        )

    @classmethod
    def from_table(cls, table: Mapping[str, object], default_id: str) -> KeyEntry:
        """The entry of one parsed `[[keys]]` table; a missing id becomes `default_id`."""
        unknown = sorted(set(table) - set(FIELDS))
        if unknown:
            raise KeyEntryError(f"field {unknown[0]!r}", "is unknown; use " + ", ".join(FIELDS))
        return cls.parse(
            table.get("id", default_id),
            table.get("tenant", ""),
            table.get("role", ""),
            table.get("sha256", ""),
        )

    def to_toml(self) -> str:
        """The entry as a `[[keys]]` table, every value escaped as a TOML basic string."""
        values = (self.key_id, self.tenant, self.role.name.lower(), self.sha256)
        lines = ["[[keys]]"] + [
            f"{name} = {toml_basic_string(value)}"
            for name, value in zip(FIELDS, values, strict=True)
        ]
        return "\n".join(lines) + "\n"


def _shown(value: str) -> str:
    return repr(value[:80] + ("..." if len(value) > 80 else ""))


def _checked(field: str, value: object, rule: re.Pattern[str], fix: str) -> str:
    if not isinstance(value, str):
        raise KeyEntryError(field, "must be a string (a quoted TOML value)")
    if not rule.fullmatch(value):
        raise KeyEntryError(field, f"{_shown(value)} is not valid; {fix}")
    return value


def _role(value: object) -> Role:
    if not isinstance(value, str):
        raise KeyEntryError("role", "must be a string (a quoted TOML value)")
    role = _ROLES.get(value.strip().lower())
    if role is None:
        raise KeyEntryError("role", f"{_shown(value)} is not valid; use reader, writer or admin")
    return role


def _sha256(value: object) -> str:
    digest = value.lower() if isinstance(value, str) else ""
    if not _HASH.fullmatch(digest):
        raise KeyEntryError(
            "sha256",
            "must be 64 hex digits (the SHA-256 of the key, never the key itself)",
        )
    return digest
