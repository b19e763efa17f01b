"""A reader process: loads the model and the collections read-only, then binds the shared port.

Started by the primary (server/reader_supervisor.py) with multiprocessing's "spawn" start
method, so it builds every gRPC and onnxruntime object itself (grpc Python cannot fork a process
that has gRPC objects); it embeds with the device the primary chose, and on a CPU host never
imports torch (core/embed/README.md, "Who imports torch"). It reports ("ready", pid, metrics
port) or ("failed", reason) on its link to the primary (the port of its own metrics endpoint on
loopback, which the primary's endpoint scrapes: server/telemetry/process_metrics.py; 0 with
metrics off), and stops gracefully on SIGTERM or SIGINT, or
when the link closes (the primary exited): a reader never outlives the primary it forwards
writes to. While it serves, the link also carries the primary's requests to clear this
process's caches (ClearCache, server/cache_clearing.py) and to count them (Stats,
server/cache_counting.py), each answered on the link at once (the messages:
server/reader_supervisor.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from multiprocessing.connection import Connection

from server import event_loop
from server.app import create_server
from server.cache_clearing import ClearRequest, clear_local
from server.cache_counting import count_local
from server.process_role import ProcessRole
from server.request_context import configure_logging
from server.runtime import Runtime
from server.settings import Settings

logger = logging.getLogger(__name__)


def run_reader(settings: Settings, role: ProcessRole, link: Connection) -> None:
    """The reader's entry point (a multiprocessing target)."""
    configure_logging(settings.log_level, settings.logging.format)
    try:
        event_loop.run(_serve(settings, role, link), settings.server.event_loop)
    finally:
        link.close()


async def _serve(settings: Settings, role: ProcessRole, link: Connection) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    runtime = Runtime(settings, follower=True)
    try:
        await loop.run_in_executor(runtime.executor, runtime.load, loop)
        server, _ = create_server(settings, role, runtime)
        await server.start()
        await server.wait_until_ready()
    except Exception as exc:  # noqa: BLE001 - reported to the primary, which stops the server
        logger.exception("reader process %d failed to start", role.number)
        link.send(("failed", f"{type(exc).__name__}: {exc}"))
        runtime.close()
        return
    loop.add_signal_handler(signal.SIGHUP, server.reload_keys)
    loop.add_reader(link.fileno(), _on_link, link, runtime, stop)
    metrics_port = server.telemetry.metrics_port if server.telemetry is not None else 0
    link.send(("ready", os.getpid(), metrics_port))
    await stop.wait()
    loop.remove_reader(link.fileno())
    await server.stop()


def _on_link(link: Connection, runtime: Runtime, stop: asyncio.Event) -> None:
    """A message from the primary (a request to clear or count the caches, answered at once),
    or EOF: the primary exited, so stop."""
    try:
        message = link.recv()
    except (EOFError, OSError):
        stop.set()
        return
    if message[0] == "clear_cache":
        _, request_id, tenant, collection = message
        retrieval, embedding = clear_local(runtime, ClearRequest(tenant, collection))
        link.send(("cleared", request_id, retrieval, embedding))
    elif message[0] == "cache_stats":
        _, request_id, tenant, collection = message
        counts = count_local(runtime, tenant, collection)
        link.send(("cache_stats", request_id, *counts.fields()))
    else:
        logger.warning("ignoring an unknown message from the primary: %r", message[0])
