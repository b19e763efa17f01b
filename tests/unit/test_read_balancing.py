"""The load board every process of a server maps (server/load_board.py), the choice of the
process a Retrieve or Answer is handed to, and the handing over itself between two balancers on
real peer sockets in one loop, down to running the call here when the other process is gone
(server/read_balancing.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from groundwire.v1 import retrieval_service_pb2 as rs
from server.load_board import NOT_SERVING, LoadBoard
from server.peer_context import PeerContext
from server.process_role import ProcessKind, ProcessRole
from server.read_balancing import DOWN_S, ReadBalancer


def test_every_mapping_of_the_board_sees_each_processs_count(tmp_path: Path) -> None:
    path = tmp_path / "load-board"
    primary = LoadBoard.create(path, 3)
    reader = LoadBoard(path, 3)  # another process maps the same file
    assert [reader.get(n) for n in range(3)] == [NOT_SERVING] * 3
    primary.set(0, 4)
    reader.set(2, 7)
    assert [primary.get(n) for n in range(3)] == [4, NOT_SERVING, 7]
    assert [reader.get(n) for n in range(3)] == [4, NOT_SERVING, 7]
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    with pytest.raises(ValueError, match="holds 24 bytes, not the 16 of a board of 2 processes"):
        LoadBoard(path, 2)
    primary.close()
    reader.close()


def _balancer(tmp_path: Path, number: int, counts: list[int]) -> tuple[ReadBalancer, LoadBoard]:
    role = ProcessRole(ProcessKind.READER, str(tmp_path), number, len(counts))
    board = LoadBoard.create(role.load_board, len(counts))
    for other, count in enumerate(counts):
        board.set(other, count)
    return ReadBalancer(role, board, lambda handler, _: handler), board


@pytest.mark.parametrize(
    ("running", "counts", "chosen"),
    [
        (0, [0, 0, 0], None),  # idle here: run it here
        (1, [0, 9, 0], 0),  # one under way here, none there
        (1, [1, 9, 1], None),  # as busy as the others
        (3, [2, 9, 1], 2),  # the least busy of those busy enough to gain
        (3, [NOT_SERVING, 9, NOT_SERVING], None),  # nobody else serves
        (16, [13, 9, 13], None),  # all busy: a quarter fewer (4) is the least worth a hand-over
        (16, [12, 9, 13], 0),
        (8, [6, 9, 7], 0),  # a quarter of 8 is 2
        (8, [7, 9, 7], None),
    ],
)
def test_a_call_goes_to_the_least_busy_process_that_runs_fewer(
    tmp_path: Path, running: int, counts: list[int], chosen: int | None
) -> None:
    balancer, board = _balancer(tmp_path, 1, counts)
    balancer._running = running
    assert balancer.choose() == chosen
    board.close()


def test_calls_handed_over_and_not_ended_count_before_the_board_shows_them(
    tmp_path: Path,
) -> None:
    balancer, board = _balancer(tmp_path, 0, [0, 0])
    balancer._running = 2
    assert balancer.choose() == 1
    balancer._sent[1] = 2  # handed over, not yet running there
    assert balancer.choose() is None
    board.close()


def test_a_process_that_did_not_take_a_call_is_left_alone_for_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    balancer, board = _balancer(tmp_path, 0, [0, 0])
    balancer._running = 2
    now = 1000.0
    monkeypatch.setattr("server.read_balancing.time.monotonic", lambda: now)
    balancer._down_until[1] = now + DOWN_S
    assert balancer.choose() is None
    now += DOWN_S + 0.01
    assert balancer.choose() == 1
    board.close()


def test_the_process_publishes_its_count_only_while_it_serves(tmp_path: Path) -> None:
    balancer, board = _balancer(tmp_path, 1, [0, NOT_SERVING])
    balancer._running = 2
    balancer._publish()
    assert board.get(1) == NOT_SERVING
    balancer.serving()
    assert board.get(1) == 2
    balancer.stopping()
    assert board.get(1) == NOT_SERVING
    board.close()


RETRIEVAL = rs.DESCRIPTOR.services_by_name["RetrievalService"]


def _handlers(name: str) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
    """Handlers of Retrieve (unary) and Answer (streaming) answering as process `name`."""

    async def unary(request: bytes, context: Any) -> bytes:
        if request == b"refuse":
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such collection")
        if request == b"slow":
            await asyncio.sleep(0.3)
        return name.encode() + b":" + request

    async def stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
        for part in (b"started", request, name.encode()):
            yield part

    same: Callable[[bytes], bytes] = bytes
    return {
        "Retrieve": grpc.unary_unary_rpc_method_handler(
            unary, request_deserializer=same, response_serializer=same
        ),
        "Answer": grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=same, response_serializer=same
        ),
    }


async def _admit(context: Any) -> None:
    return None


def _balanced(balancer: ReadBalancer, name: str) -> dict[str, Any]:
    local = _handlers(name)
    return {
        rpc: balancer.handler_for(RETRIEVAL.methods_by_name[rpc], handler, _admit)
        for rpc, handler in local.items()
    }


async def _two_processes(tmp_path: Path) -> tuple[ReadBalancer, ReadBalancer, LoadBoard]:
    """Process 0 ("here") and process 1 ("there", listening on its peer socket), both serving,
    and the board as process 0 maps it."""
    here, board = _balancer(tmp_path, 0, [0, 0])
    there = ReadBalancer(
        ProcessRole(ProcessKind.READER, str(tmp_path), 1, 2),
        LoadBoard(ProcessRole(sockets=str(tmp_path)).load_board, 2),
        lambda handler, _: handler,
    )
    await there.start()
    here.serving()
    there.serving()
    return here, there, board


def test_a_busier_process_hands_calls_over_and_runs_them_itself_when_the_other_is_gone(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        here, there, board = await _two_processes(tmp_path)
        outcomes: list[tuple[str, str]] = []
        here._handed_over = lambda rpc, outcome: outcomes.append((rpc, outcome))
        ours, theirs = _balanced(here, "primary"), _balanced(there, "reader")
        context = PeerContext((), None)
        assert await ours["Retrieve"].unary_unary(b"q", context) == b"primary:q"  # idle here
        here._running = 1  # one call under way here, none there: the next goes there
        assert await ours["Retrieve"].unary_unary(b"q", context) == b"reader:q"
        answer = [part async for part in ours["Answer"].unary_stream(b"q", context)]
        assert answer == [b"started", b"q", b"reader"]
        with pytest.raises(grpc.aio.AbortError):
            await ours["Retrieve"].unary_unary(b"refuse", context)
        assert context.status()[:2] == (grpc.StatusCode.NOT_FOUND, "no such collection")
        assert board.get(1) == 0 and there._running == 0  # every handed call ended there
        assert await theirs["Retrieve"].unary_unary(b"q", context) == b"reader:q"  # its own

        await there.close()  # the other process is gone: run it here, then leave it alone a while
        assert await ours["Retrieve"].unary_unary(b"q", context) == b"primary:q"
        assert here._down_until[1] > time.monotonic()
        answer = [part async for part in ours["Answer"].unary_stream(b"q", context)]
        assert answer == [b"started", b"q", b"primary"]
        handed = ("Retrieve", "handed")
        assert outcomes == [handed, ("Answer", "handed"), handed, ("Retrieve", "ran_here")]
        await here.close()

    asyncio.run(main())


def test_a_stopping_process_lets_the_calls_handed_to_it_end_within_the_grace(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        here, there, board = await _two_processes(tmp_path)
        ours, _ = _balanced(here, "primary"), _balanced(there, "reader")
        here._running = 1
        handed = asyncio.create_task(ours["Retrieve"].unary_unary(b"slow", PeerContext((), None)))
        while there._running == 0:
            await asyncio.sleep(0.01)
        there.stopping()
        assert board.get(1) == NOT_SERVING  # no more calls handed there
        await there.close(grace_s=5.0)
        assert await handed == b"reader:slow"
        await here.close()

    asyncio.run(main())
