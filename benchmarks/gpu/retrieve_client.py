"""One Retrieve load-generator process: `concurrency` calls in flight for `duration` seconds.

Run by grpc_load.py (one process per share of the concurrency); imports only grpc and the stubs,
so it starts fast. Prints one JSON object: latencies (s), errors, seconds spent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import grpc

from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc

MODES = {"dense": rs.RETRIEVAL_MODE_DENSE, "hybrid": rs.RETRIEVAL_MODE_HYBRID}


async def load(
    target: str,
    collection: str,
    queries: list[str],
    mode: str,
    concurrency: int,
    duration_s: float,
    offset: int,
) -> dict[str, object]:
    """Run the load; latencies of successful calls, count of failed ones, seconds spent, and the
    server's stage timings summed per stage (milliseconds, from each response)."""
    latencies: list[float] = []
    stages: dict[str, float] = {}
    errors = 0
    async with grpc.aio.insecure_channel(target) as channel:
        stub = rs_grpc.RetrievalServiceStub(channel)
        warm_up = rs.RetrieveRequest(query=queries[0], collection=collection, top_k=10)
        await stub.Retrieve(warm_up, timeout=60)
        started = time.perf_counter()
        deadline = started + duration_s

        async def worker(slot: int) -> None:
            nonlocal errors
            position = offset * 7919 + slot * 104729
            while time.perf_counter() < deadline:
                position += 1
                query = queries[position % len(queries)]
                request = rs.RetrieveRequest(query=query, collection=collection, top_k=10)
                request.hybrid.mode = MODES[mode]
                sent = time.perf_counter()
                try:
                    response = await stub.Retrieve(request, timeout=30)
                except grpc.aio.AioRpcError:
                    errors += 1
                    continue
                latencies.append(time.perf_counter() - sent)
                for timing in response.timings:
                    stages[timing.stage] = stages.get(timing.stage, 0.0) + timing.millis

        await asyncio.gather(*(worker(slot) for slot in range(concurrency)))
        return {
            "latencies": latencies,
            "errors": errors,
            "seconds": time.perf_counter() - started,
            "stages_ms": stages,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", required=True)
    parser.add_argument("--queries", type=Path, required=True, help="JSON list of query strings")
    parser.add_argument("--mode", choices=sorted(MODES), required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--duration", type=float, required=True)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--collection", default="")
    args = parser.parse_args()
    queries = json.loads(args.queries.read_text(encoding="utf-8"))
    outcome = asyncio.run(
        load(
            args.target,
            args.collection,
            queries,
            args.mode,
            args.concurrency,
            args.duration,
            args.offset,
        )
    )
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
