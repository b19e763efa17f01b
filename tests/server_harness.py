"""A real groundwire server on port 0, run on its own event loop in a background thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

from server.app import GroundwireServer, create_server
from server.settings import Settings


class ServerThread:
    """Starts `create_server(settings)` in a thread; `call()` runs coroutines on its loop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="gw-test-server", daemon=True
        )
        self.server: GroundwireServer | None = None
        self.port = 0

    @property
    def target(self) -> str:
        """host:port to dial."""
        return f"127.0.0.1:{self.port}"

    def call(self, coroutine: Coroutine[Any, Any, Any], timeout: float = 600) -> Any:
        """Run a coroutine on the server's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def start(self, load: bool = True) -> ServerThread:
        """Bind, start serving and (by default) wait until the indexes are loaded."""
        self._thread.start()

        async def boot() -> None:
            self.server, self.port = create_server(self.settings)
            await self.server.start(load=False)
            if load:
                await self.server.wait_until_ready()

        self.call(boot())
        return self

    def load(self) -> None:
        """Finish loading (for servers started with load=False)."""
        assert self.server is not None
        self.call(self.server.wait_until_ready())

    def stop(self) -> None:
        """Graceful stop, then end the loop thread."""
        if self.server is not None:
            self.call(self.server.stop(grace=1.0))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
