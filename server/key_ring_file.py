"""The keys file, reloaded when it changes or on SIGHUP: each reload swaps in a whole new KeyRing.

A file that fails to load (bad TOML, a bad entry, missing) keeps the keys loaded before and logs
why; it is tried again the next time it changes. Logs name key ids, never keys or their hashes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path

from core.errors import InvalidArgument
from server.api_keys import KeyRing

logger = logging.getLogger(__name__)

Signature = tuple[int, int, int, int, int] | None
"""(device, inode, size, mtime ns, ctime ns) of the file; None when it cannot be stat'ed."""


def file_signature(path: Path) -> Signature:
    """What changes when the file is rewritten in place or replaced by a rename."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class KeyRingFile:
    """The KeyRing last loaded from `path`; `current()` is what authentication uses."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._signature = file_signature(path)
        self._ring = KeyRing.load(path)  # at start-up a bad file stops the server

    def current(self) -> KeyRing:
        """The keys in force (one consistent ring, replaced as a whole by reloads)."""
        return self._ring

    def reload_if_changed(self) -> bool:
        """Reload when the file's signature changed since the last attempt; True if swapped."""
        with self._lock:
            signature = file_signature(self.path)
            if signature == self._signature:
                return False
            return self._reload(signature, "changed")

    def reload(self) -> bool:
        """Reload unconditionally (SIGHUP); True if the new keys are in force."""
        with self._lock:
            return self._reload(file_signature(self.path), "SIGHUP")

    def _reload(self, signature: Signature, why: str) -> bool:
        self._signature = signature  # a bad file is retried when it changes again, not every poll
        old = self._ring
        try:
            new = KeyRing.load(self.path)
        except InvalidArgument as exc:
            logger.error(
                "keys file not reloaded (%s): %s. Still accepting the %d keys loaded before; "
                "fix the file and it is reloaded when it changes or on SIGHUP",
                why,
                exc,
                len(old),
            )
            return False
        self._ring = new
        added = sorted({key_id for key_id, _ in new.entries() - old.entries()})
        removed = sorted({key_id for key_id, _ in old.entries() - new.entries()})
        logger.info(
            "API keys reloaded (%s): %d keys for %d tenants; added ids %s, removed ids %s",
            why,
            len(new),
            len(new.tenants()),
            added or "none",
            removed or "none",
        )
        return True


async def watch_key_file(keys: KeyRingFile, interval_s: float) -> None:
    """Check the file every `interval_s` seconds until cancelled (a stat; a read only on change)."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            await asyncio.to_thread(keys.reload_if_changed)
        except Exception:  # noqa: BLE001 - the watcher must outlive any one failure
            logger.exception("checking the keys file %s failed; will retry", keys.path)
