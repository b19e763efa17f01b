"""API keys: a TOML file of hashed keys, each mapping to one tenant and one role.

The file holds only SHA-256 hashes of the keys (keys are random 32-byte tokens, so an unsalted
hash is as strong as the key itself). `groundwire keygen` makes a key and prints its entry::

    [[keys]]
    id = "search-frontend"
    tenant = "acme"
    role = "reader"
    sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import InvalidArgument
from server.api_key_entry import KeyEntry, KeyEntryError
from server.principal import Principal

KEY_PREFIX = "gw_"


def hash_key(key: str) -> str:
    """Hex SHA-256 of a key as stored in the keys file."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A fresh random key (256 bits of entropy)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One configured key: its hash and the principal it authenticates as."""

    key_id: str
    sha256: str
    principal: Principal


class KeyRing:
    """The configured keys, looked up by hash in constant time per candidate."""

    def __init__(self, keys: Sequence[ApiKey]) -> None:
        self._keys = tuple(keys)

    def __len__(self) -> int:
        return len(self._keys)

    def authenticate(self, key: str) -> Principal | None:
        """The principal of `key`, or None when it matches no configured key."""
        digest = hash_key(key)
        found: Principal | None = None
        for candidate in self._keys:  # compare against every key: timing says nothing
            if hmac.compare_digest(candidate.sha256, digest):
                found = candidate.principal
        return found

    def tenants(self) -> frozenset[str]:
        """Every tenant some key belongs to."""
        return frozenset(k.principal.tenant for k in self._keys)

    def current(self) -> KeyRing:
        """This ring (a fixed ring is its own source; see server.key_ring_file for a reloading one)."""
        return self

    def entries(self) -> frozenset[tuple[str, str]]:
        """(key id, sha256) of every configured key, to tell what a reload changed."""
        return frozenset((k.key_id, k.sha256) for k in self._keys)

    @classmethod
    def load(cls, path: Path) -> KeyRing:
        """Read and validate a keys file; errors name the entry and the fix."""
        field = "auth.keys_file"
        try:
            with path.open("rb") as handle:
                raw = tomllib.load(handle)
        except FileNotFoundError:
            raise InvalidArgument.field(field, f"keys file {path} does not exist") from None
        except OSError as exc:
            raise InvalidArgument.field(
                field, f"cannot read keys file {path}: {exc.strerror or exc}"
            ) from None
        except tomllib.TOMLDecodeError as exc:
            raise InvalidArgument.field(
                field, f"keys file {path} is not valid TOML: {exc}"
            ) from None
        except UnicodeDecodeError:
            raise InvalidArgument.field(field, f"keys file {path} is not UTF-8 text") from None
        entries = raw.get("keys", [])
        if not isinstance(entries, list) or not entries:
            raise InvalidArgument.field(
                field, f"keys file {path} has no [[keys]] entries; add one with `groundwire keygen`"
            )
        keys = [_entry(entry, i, path) for i, entry in enumerate(entries)]
        _reject_duplicates(keys, path)
        return cls(keys)


def _entry(table: Any, index: int, path: Path) -> ApiKey:
    where = f"{path} keys[{index}]"
    if not isinstance(table, Mapping):
        raise InvalidArgument.field("auth.keys_file", f"{where} must be a table")
    try:
        entry = KeyEntry.from_table(table, default_id=f"key-{index}")
    except KeyEntryError as exc:
        raise InvalidArgument.field("auth.keys_file", f"{where} {exc}") from None
    return ApiKey(entry.key_id, entry.sha256, Principal(entry.tenant, entry.role, entry.key_id))


def _reject_duplicates(keys: Sequence[ApiKey], path: Path) -> None:
    seen: dict[str, str] = {}
    for key in keys:
        if key.sha256 in seen:
            raise InvalidArgument.field(
                "auth.keys_file",
                f"{path}: keys {seen[key.sha256]!r} and {key.key_id!r} have the same hash; "
                "each key must be unique",
            )
        seen[key.sha256] = key.key_id
