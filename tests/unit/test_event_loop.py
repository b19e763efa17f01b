"""`server.event_loop`: each named loop really runs the server's coroutines, grpc.aio included
(a real server and channel on it), and a name that is not a loop is refused naming the choices."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from core.errors import InvalidArgument
from server import event_loop
from server.settings import load_settings


async def _health_round_trip() -> tuple[str, int]:
    """The running loop's class name and a Health Check's status through a real grpc.aio
    server and channel on that loop."""
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
    finally:
        await server.stop(None)
    return type(asyncio.get_running_loop()).__module__, reply.status


@pytest.mark.parametrize("choice", event_loop.LOOPS)
def test_each_loop_serves_grpc_aio(choice: str) -> None:
    module, status = event_loop.run(_health_round_trip(), choice)
    assert module.startswith(choice)  # asyncio.unix_events / uvloop
    assert status == health_pb2.HealthCheckResponse.SERVING


def test_an_unknown_loop_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="one of asyncio, uvloop, got 'trio'"):
        event_loop.loop_factory("trio")
    with pytest.raises(InvalidArgument, match="server.event_loop: must be one of asyncio, uvloop"):
        load_settings(env={"GROUNDWIRE_SERVER__EVENT_LOOP": "trio"})


def test_the_default_is_uvloop() -> None:
    assert load_settings(env={}).server.event_loop == "uvloop"
