"""`groundwire serve`: run the server until SIGTERM or SIGINT, then shut down gracefully.

SIGHUP reloads the keys file (it is also reloaded when it changes).
"""

from __future__ import annotations

import asyncio
import logging
import signal

from server.app import create_server
from server.settings import Settings

logger = logging.getLogger(__name__)


async def serve(settings: Settings) -> None:
    """Start, wait for a signal, stop with the configured grace period."""
    server, port = create_server(settings)
    await server.start()
    logger.info(
        "groundwire listening on %s:%d (data in %s)",
        settings.server.host,
        port,
        settings.storage.data_dir,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, server.reload_keys)
    await stop.wait()
    logger.info("signal received: shutting down (grace %.1fs)", settings.server.shutdown_grace_s)
    await server.stop()
