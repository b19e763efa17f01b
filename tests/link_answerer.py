"""A stand-in reader process for ReaderSupervisor's tests: it answers the primary's requests on
its link as server/reader_process.py does, with fixed figures, after a delay (stdlib only, so
spawning it is quick)."""

from __future__ import annotations

import time
from multiprocessing.connection import Connection

COUNTS = (3, 4, 5, 6, 7)
"""What it reports for ("cache_stats", ...): embedding hits and misses, retrieval hits, misses
and entries."""
CLEARED = (2, 1)
"""What it reports for ("clear_cache", ...): retrieval and embedding entries removed."""


def answer_link(link: Connection, delay_s: float) -> None:
    """Answer every request `delay_s` seconds after it arrives, until the link closes."""
    while True:
        try:
            kind, request_id, *_ = link.recv()
        except (EOFError, OSError):
            return
        time.sleep(delay_s)
        answer = ("cache_stats", *COUNTS) if kind == "cache_stats" else ("cleared", *CLEARED)
        try:
            link.send((answer[0], request_id, *answer[1:]))
        except OSError:  # the primary closed the link meanwhile
            return
