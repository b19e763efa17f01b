"""Authentication of one RPC: the `authorization: Bearer <key>` metadata to a Principal."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Protocol

from core.errors import Unauthenticated
from server.api_keys import KeyRing
from server.principal import LOCAL_ADMIN, Principal

logger = logging.getLogger(__name__)

AUTHORIZATION_HEADER = "authorization"
_SCHEME = "bearer "


class KeySource(Protocol):
    """Where the keys in force come from: a fixed KeyRing, or a KeyRingFile that reloads."""

    def current(self) -> KeyRing:
        """The keys in force now."""
        ...


class Authenticator:
    """Turns request metadata into a Principal; with no key source every caller is the local admin."""

    def __init__(self, keys: KeySource | None) -> None:
        self._keys = keys

    def authenticate(self, metadata: Iterable[tuple[str, Any]] | None) -> Principal:
        """The caller's principal; Unauthenticated when a key is required and missing or unknown."""
        if self._keys is None:
            return LOCAL_ADMIN
        values = [v for k, v in metadata or () if k == AUTHORIZATION_HEADER]
        if not values:
            raise Unauthenticated(
                "missing credentials: send the metadata 'authorization: Bearer <api key>'"
            )
        if len(values) > 1:
            raise Unauthenticated("send exactly one 'authorization' metadata entry")
        value = values[0] if isinstance(values[0], str) else ""
        if not value.lower().startswith(_SCHEME) or not value[len(_SCHEME) :].strip():
            raise Unauthenticated("malformed 'authorization' metadata: expected 'Bearer <api key>'")
        principal = self._keys.current().authenticate(value[len(_SCHEME) :].strip())
        if principal is None:
            raise Unauthenticated("unknown API key; check the key or ask an admin for a new one")
        return principal
