"""`ServerMetrics`: the Prometheus series measured as requests run (RPCs, stages, generation).

Series sampled from the runtime at scrape time (queues, caches, index sizes, memory) are in
`runtime_collector`. Each server owns its registry, so servers in one process do not collide.
RPC series follow go-grpc-prometheus names so existing gRPC dashboards work unchanged.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.gc_collector import GCCollector
from prometheus_client.process_collector import ProcessCollector

RPC_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
STAGE_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
)  # fmt: skip
FIRST_TOKEN_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30)
RPC_LABELS = ("grpc_type", "grpc_service", "grpc_method")


class ServerMetrics:
    """Counters and histograms fed by the RPC interceptor and, as a `TelemetrySink`, by core."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        ProcessCollector(registry=self.registry)  # process_resident_memory_bytes, cpu, fds
        GCCollector(registry=self.registry)
        self._started = Counter(
            "grpc_server_started",
            "RPCs started on the server.",
            RPC_LABELS,
            registry=self.registry,
        )
        self._handled = Counter(
            "grpc_server_handled",
            "RPCs completed on the server, by status code.",
            (*RPC_LABELS, "grpc_code"),
            registry=self.registry,
        )
        self._handling = Histogram(
            "grpc_server_handling_seconds",
            "Time from an RPC's start to its status, by status code.",
            (*RPC_LABELS, "grpc_code"),
            buckets=RPC_BUCKETS,
            registry=self.registry,
        )
        self._stage = Histogram(
            "groundwire_stage_duration_seconds",
            "Wall time of one pipeline stage (pipeline: retrieve, answer or index).",
            ("pipeline", "stage"),
            buckets=STAGE_BUCKETS,
            registry=self.registry,
        )
        self._tokens = Counter(
            "groundwire_generator_tokens",
            "Tokens the answer generator read (prompt) and wrote (completion).",
            ("generator", "kind"),
            registry=self.registry,
        )
        self._handed_over = Counter(
            "groundwire_handed_over_calls",
            "Calls that arrived here and were handed to another process of the server (outcome "
            "handed), or that it could not take and ran here (outcome ran_here).",
            ("grpc_method", "outcome"),
            registry=self.registry,
        )
        self._first_token = Histogram(
            "groundwire_generator_time_to_first_token_seconds",
            "Time from an Answer request's start to the first generated token.",
            ("generator",),
            buckets=FIRST_TOKEN_BUCKETS,
            registry=self.registry,
        )

    def rpc_started(self, grpc_type: str, service: str, method: str) -> None:
        """An RPC arrived."""
        self._started.labels(grpc_type, service, method).inc()

    def rpc_finished(
        self, grpc_type: str, service: str, method: str, code: str, seconds: float
    ) -> None:
        """An RPC ended with status `code` (e.g. "OK", "NOT_FOUND") after `seconds`."""
        self._handled.labels(grpc_type, service, method, code).inc()
        self._handling.labels(grpc_type, service, method, code).observe(seconds)

    def call_handed_over(self, method: str, outcome: str) -> None:
        """A call of `method` that arrived here ran in another process ("handed") or, that
        process being gone, here after all ("ran_here"): server/read_balancing.py."""
        self._handed_over.labels(method, outcome).inc()

    def stage_finished(self, pipeline: str, stage: str, seconds: float) -> None:
        """`TelemetrySink`: one stage's wall time."""
        self._stage.labels(pipeline, stage).observe(seconds)

    def generation_finished(
        self,
        generator: str,
        first_token_s: float | None,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        """`TelemetrySink`: token counts and time to first token of one answer."""
        self._tokens.labels(generator, "prompt").inc(prompt_tokens)
        self._tokens.labels(generator, "completion").inc(completion_tokens)
        if first_token_s is not None:
            self._first_token.labels(generator).observe(first_token_s)
