"""`groundwire serve`: run the server until SIGTERM or SIGINT, then shut down gracefully.

SIGHUP reloads the keys file (it is also reloaded when it changes). With `server.processes`
above 1 this process is the primary (the only writer) and starts the reader processes
(server/reader_supervisor.py); `groundwire listening on HOST:PORT` is logged once, when every
process serves.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import shutil
import signal
import tempfile
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from server.app import GroundwireServer, create_server
from server.load_board import LoadBoard
from server.process_count import resolved_processes
from server.process_role import ProcessKind, ProcessRole
from server.reader_supervisor import ReaderStartError, ReaderSupervisor
from server.settings import Settings
from server.shared_port import reserve_shared_port

logger = logging.getLogger(__name__)


async def serve(settings: Settings) -> None:
    """Start, wait for a signal, stop with the configured grace period."""
    processes = resolved_processes(settings)
    if processes > 1:
        await _serve_processes(settings, processes)
        return
    server, port = create_server(settings)
    await server.start()
    _log_listening(settings, port, 1)
    stop = _stop_on_signals(server)
    await stop.wait()
    logger.info("signal received: shutting down (grace %.1fs)", settings.server.shutdown_grace_s)
    await server.stop()


async def _serve_processes(settings: Settings, processes: int) -> None:
    """The primary of `processes` processes: bind the shared port, load, start the readers."""
    try:
        port = reserve_shared_port(settings.server.host, settings.server.port)
    except OSError as exc:
        raise SystemExit(f"error: {exc}") from None
    settings = settings.replace(server=dataclasses.replace(settings.server, port=port))
    sockets = Path(tempfile.mkdtemp(prefix="groundwire-"))  # mode 0700: this user only
    role = ProcessRole(ProcessKind.PRIMARY, str(sockets), 0, processes)
    board = LoadBoard.create(role.load_board, processes)  # every process maps it
    readers = ReaderSupervisor(settings, role, board)
    failure = ""
    try:
        server, _ = create_server(settings, role)
        server.runtime.reader_caches = readers  # ClearCache and Stats reach every process's caches
        if server.telemetry is not None:  # the metrics endpoint reports every process
            server.telemetry.scrape_readers(readers)
        await server.start()
        stop = _stop_on_signals(server)
        asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, _reload_keys, server, readers)
        try:  # a signal meanwhile stops start-up at once
            started = await _unless_stopped(server.wait_until_ready(), stop) and (
                await _unless_stopped(readers.start(server.runtime.catalog.device), stop)
            )
        except (RuntimeError, ReaderStartError) as exc:  # logged; the server cannot serve
            await server.stop(grace=0)
            raise SystemExit(f"error: {exc}") from None
        if not started:
            logger.info("signal received while starting: shutting down")
            await server.stop(grace=0)
            return
        _log_listening(settings, port, processes)

        def give_up(reason: str) -> None:
            nonlocal failure
            failure = reason
            stop.set()

        watcher = asyncio.create_task(readers.watch(give_up))
        await stop.wait()
        if failure:
            logger.error("stopping: %s", failure)
        else:
            logger.info(
                "signal received: shutting down %d processes (grace %.1fs)",
                processes,
                settings.server.shutdown_grace_s,
            )
        await readers.stop(settings.server.shutdown_grace_s)
        await asyncio.wait([watcher])
        await server.stop()
    finally:
        await readers.stop(grace_s=0)  # after a failure above: no reader outlives the primary
        board.close()
        shutil.rmtree(sockets, ignore_errors=True)
    if failure:
        raise SystemExit(f"error: {failure}")


async def _unless_stopped(step: Coroutine[Any, Any, None], stop: asyncio.Event) -> bool:
    """Run `step` unless `stop` is set first (then cancel it); True when it finished."""
    task = asyncio.ensure_future(step)
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if not task.done():
        task.cancel()
        await asyncio.wait([task])
        return False
    task.result()  # its error, if any
    return True


def _stop_on_signals(server: GroundwireServer) -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, server.reload_keys)
    return stop


def _reload_keys(server: GroundwireServer, readers: ReaderSupervisor) -> None:
    server.reload_keys()
    readers.send_signal(signal.SIGHUP)


def _log_listening(settings: Settings, port: int, processes: int) -> None:
    logger.info(
        "groundwire listening on %s:%d (data in %s, %d process%s)",
        settings.server.host,
        port,
        settings.storage.data_dir,
        processes,
        "" if processes == 1 else "es",
    )
