"""Retries of the Python clients: backoff on UNAVAILABLE, RetryInfo honoured, limits respected."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import grpc
import pytest

from groundwire import AsyncClient, Client, GroundwireError, RetryPolicy
from tests.clients.flaky_server import FlakyRetrieve

FAST = RetryPolicy(max_attempts=4, initial_backoff_s=0.01, max_backoff_s=0.02)


@pytest.fixture
def flaky(request: pytest.FixtureRequest) -> Iterator[FlakyRetrieve]:
    code, failures, delay = request.param
    server = FlakyRetrieve(code, failures, delay)
    yield server
    server.stop()


@pytest.mark.parametrize(
    "flaky", [(grpc.StatusCode.UNAVAILABLE, 2, 0.5)], indirect=True, ids=["unavailable-0.5s"]
)
def test_sync_retry_waits_the_servers_retry_delay(flaky: FlakyRetrieve) -> None:
    with Client(flaky.target, api_key="k", retry=FAST) as client:
        response = client.retrieve("q", collection="c")
    assert list(response.warnings) == ["served"]
    assert len(flaky.arrivals) == 3
    assert all(gap >= 0.5 for gap in flaky.gaps())  # RetryInfo, not the 10-20 ms backoff
    assert all(m["authorization"] == "Bearer k" for m in flaky.metadata)  # on every attempt


@pytest.mark.parametrize(
    "flaky",
    [(grpc.StatusCode.RESOURCE_EXHAUSTED, 1, 0.3)],
    indirect=True,
    ids=["resource-exhausted-0.3s"],
)
def test_async_retry_waits_the_servers_retry_delay(flaky: FlakyRetrieve) -> None:
    async def call() -> list[str]:
        async with AsyncClient(flaky.target, retry=FAST) as client:
            return list((await client.retrieve("q")).warnings)

    assert asyncio.run(call()) == ["served"]
    assert len(flaky.arrivals) == 2 and flaky.gaps()[0] >= 0.3


@pytest.mark.parametrize(
    "flaky", [(grpc.StatusCode.UNAVAILABLE, 10, None)], indirect=True, ids=["always-unavailable"]
)
def test_backoff_gives_up_after_max_attempts_with_the_last_error(flaky: FlakyRetrieve) -> None:
    with Client(flaky.target, retry=FAST) as client:
        with pytest.raises(GroundwireError) as failed:
            client.retrieve("q")
    assert (failed.value.code, failed.value.message) == (
        grpc.StatusCode.UNAVAILABLE,
        "try again later",
    )
    assert failed.value.retry_delay_s is None
    assert len(flaky.arrivals) == FAST.max_attempts


@pytest.mark.parametrize(
    "flaky",
    [(grpc.StatusCode.RESOURCE_EXHAUSTED, 1, None)],
    indirect=True,
    ids=["limit-without-retry-info"],
)
def test_resource_exhausted_without_retry_info_is_a_hard_limit(flaky: FlakyRetrieve) -> None:
    with Client(flaky.target, retry=FAST) as client:
        with pytest.raises(GroundwireError) as failed:
            client.retrieve("q")
    assert failed.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert len(flaky.arrivals) == 1


@pytest.mark.parametrize(
    "flaky", [(grpc.StatusCode.UNAVAILABLE, 1, 5.0)], indirect=True, ids=["delay-past-deadline"]
)
def test_no_retry_when_the_delay_would_pass_the_deadline(flaky: FlakyRetrieve) -> None:
    with Client(flaky.target, retry=FAST) as client:
        with pytest.raises(GroundwireError) as failed:
            client.retrieve("q", timeout=1.0)
    assert failed.value.code is grpc.StatusCode.UNAVAILABLE
    assert failed.value.retry_delay_s == 5.0
    assert len(flaky.arrivals) == 1


@pytest.mark.parametrize(
    "flaky",
    [(grpc.StatusCode.INVALID_ARGUMENT, 1, None)],
    indirect=True,
    ids=["invalid-argument"],
)
def test_other_codes_are_not_retried(flaky: FlakyRetrieve) -> None:
    with Client(flaky.target, retry=FAST) as client:
        with pytest.raises(GroundwireError):
            client.retrieve("q")
    assert len(flaky.arrivals) == 1
