"""Settings: one frozen object, loaded once from a TOML file plus GROUNDWIRE_* environment variables.

Environment variables name a section and a key separated by a double underscore, for example
``GROUNDWIRE_SERVER__PORT=7000`` or ``GROUNDWIRE_STORAGE__DATA_DIR=/var/lib/groundwire``.
``GROUNDWIRE_CONFIG`` names the TOML file. Precedence: defaults < file < environment.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any

from core.answer.extractive_generator import DEFAULT_CANDIDATES, SentenceScoring
from core.answer.llama_cpp_generator import DEFAULT_N_CTX
from core.embed.micro_batcher import DEFAULT_MAX_BATCH, DEFAULT_MAX_QUEUE, DEFAULT_MAX_WAIT_MS
from core.embed.model_runtime import ModelRuntime
from core.errors import InvalidArgument
from core.milvus.options import MilvusIndexKind
from core.retrieve.fusion import FusionMethod
from core.retrieve.modes import RetrievalMode
from core.tune.options import TuneOptions
from server.event_loop import LOOPS

ENV_PREFIX = "GROUNDWIRE_"
MIB = 1024 * 1024
MAX_CONTEXT_WINDOW_TOKENS = 10_000_000
MAX_PROCESSES = 64


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """The gRPC listener."""

    host: str = "127.0.0.1"
    port: int = 50051
    max_message_bytes: int = 32 * MIB
    shutdown_grace_s: float = 10.0
    worker_threads: int = 8
    # Threads of each process that run Retrieve's stages beside the embedding (and its lexical
    # searches). 0: the available cores shared among the processes, at least one each, or
    # worker_threads with a remote storage backend, whose searches wait on the network
    # (server/process_count.py)
    retrieval_threads: int = 0
    # Server processes sharing the port (SO_REUSEPORT): the primary writes, the others serve
    # reads and forward writes to it (README, "Processes"). 0: one per available core.
    processes: int = 0
    # With several processes, a Retrieve or Answer that arrives while another process runs fewer
    # of them is handed to that one (the kernel spreads connections, not calls: one client
    # channel would use one process); false keeps every call where it arrived
    balance_reads: bool = True
    # Retrieve awaits its query embedding on the event loop (no worker thread waits for it);
    # false: the whole pipeline runs on one worker thread (the pre-#16 path, for comparison)
    await_query_embeddings: bool = True
    # The event loop of every server process: "uvloop" (libuv, its loop work in C) or "asyncio"
    # (the standard library's) (server/event_loop.py)
    event_loop: str = "uvloop"
    reflection: bool = True
    tls_cert_file: str = ""  # PEM server certificate chain; set with tls_key_file to serve TLS
    tls_key_file: str = ""  # PEM private key of tls_cert_file
    tls_client_ca_file: str = ""  # PEM CA bundle; set to require client certificates (mutual TLS)


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """The embedding model. An empty path means the bundled all-MiniLM-L6-v2."""

    embedding_model_path: str = ""
    device: str = "auto"
    batch_size: int = 32
    query_batch_max: int = DEFAULT_MAX_BATCH  # queries embedded in one forward pass, at most
    query_batch_wait_ms: float = DEFAULT_MAX_WAIT_MS  # how long the first query waits for company
    query_queue_max: int = DEFAULT_MAX_QUEUE  # pending queries beyond this get RESOURCE_EXHAUSTED
    cuda_graphs: bool = True  # replay CUDA graphs for query batches up to 64 on CUDA devices
    # auto | auto-fp32 | auto-int8 | torch | onnx | onnx-int8 (core/embed/README.md). auto: on a
    # CPU queries by onnx-int8 (per-token int8, about half fp32's CPU; else onnx) and documents by
    # onnx fp32 in a session with a thread per available core (onnxruntime, GIL released); on
    # CUDA torch. auto-fp32: fp32 queries too; auto-int8: the same as auto (its old name). onnx
    # variants run on the CPU, built once from the model and verified against torch.
    runtime: ModelRuntime = ModelRuntime.AUTO
    # onnxruntime intra-op threads of each process's query model; 0 = the available cores shared
    # among the server processes, at least one each (server/process_count.py)
    onnx_threads: int = 0
    # where the ONNX files are built and cached, keyed by model fingerprint; shared by data
    # directories and processes. Empty: $XDG_CACHE_HOME/groundwire/onnx (~/.cache/...)
    onnx_cache_dir: str = ""


class StorageBackendKind(str, Enum):
    """Where collections live (`storage.backend`)."""

    LOCAL = "local"
    MILVUS = "milvus"


@dataclass(frozen=True, slots=True)
class StorageSettings:
    """Where collections live."""

    data_dir: str = "groundwire-data"
    default_collection: str = "default"
    seed_demo_corpus: bool = True
    backend: StorageBackendKind = StorageBackendKind.LOCAL
    """"local": each replica keeps its collections under data_dir; "milvus": collections live
    in Milvus and replicas are stateless (needs `pip install 'groundwire[milvus]'`)."""
    milvus_uri: str = ""
    """A milvus-lite path (e.g. "milvus.db", served inside this process) or http(s)://host:19530."""
    milvus_token: str = field(default="", repr=False)
    """Milvus token ("user:password" or an API key); secret, set it through the environment."""
    milvus_database: str = "groundwire"
    """Prefix of the per-tenant Milvus databases ("<milvus_database>_<tenant>")."""
    milvus_tls_ca_file: str = ""
    """CA bundle that verifies a TLS Milvus endpoint ("" = plain connection)."""
    milvus_index: MilvusIndexKind = MilvusIndexKind.AUTO
    """Dense index of new collections: auto (FLAT, HNSW past 100 000 chunks), flat, hnsw or
    gpu_cagra (GPU Milvus clusters)."""


@dataclass(frozen=True, slots=True)
class IndexingSettings:
    """Chunking and ingestion limits."""

    chunk_max_tokens: int = 200
    max_document_bytes: int = 10 * MIB
    max_documents_per_message: int = 256


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    """Defaults and caps for Retrieve."""

    default_top_k: int = 10
    max_top_k: int = 100
    max_query_chars: int = 2000
    mode: RetrievalMode = RetrievalMode.HYBRID
    fusion: FusionMethod = FusionMethod.WEIGHTED
    rrf_k: int = 60
    # Fusion weights used when a request leaves them unset. Weighted fusion with 1 : 0.25 is a
    # convex combination leaning 0.8 towards dense (min-max normalised), the setting Bruch et al.
    # (2023, "An Analysis of Fusion Functions for Hybrid Retrieval") found robust; on python-faq
    # every lexical weight in 0.2-0.6 beats dense alone (benchmarks/results/python_faq_quality.md).
    dense_weight: float = 1.0
    lexical_weight: float = 0.25
    # Share of a chunk's dense score taken from its section's whole-section vector (0 = chunk
    # vectors only, 1 = section vectors only); see core/retrieve/section_scores.py.
    section_weight: float = 0.5
    # Hybrid: the chunks only BM25 found get their exact dense score before fusion instead of
    # counting 0 (core/retrieve/lexical_candidates.py). Off by default: it helps where BM25 is
    # strong and costs MRR where it is weak (benchmarks/results/lexical_candidates.md).
    score_lexical_candidates: bool = False
    # Diversity of the hits when a request leaves it unset (core/retrieve/diversity.py):
    # maximal marginal relevance lambda (1 = plain ranking) and hits per document (0 = no limit).
    mmr_lambda: float = 1.0
    max_hits_per_document: int = 0
    default_budget_tokens: int = 2000
    max_budget_tokens: int = 200_000
    max_budget_chars: int = 2_000_000


@dataclass(frozen=True, slots=True)
class AuthSettings:
    """API keys. Without a keys file every caller is the default tenant's admin (logged loudly)."""

    keys_file: str = ""  # TOML file of [[keys]] (id, tenant, role, sha256); see server/api_keys.py
    required: bool = False  # refuse to start without a keys file (for deployments)
    keys_reload_interval_s: float = 1.0  # how often the keys file is checked for changes


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """How the client commands (index, query, answer) reach a server that requires keys or TLS."""

    api_key: str = field(default="", repr=False)  # prefer api_key_file or the environment
    api_key_file: str = ""
    tls_ca_file: str = ""  # PEM CA bundle to verify the server; setting it turns TLS on
    tls_cert_file: str = ""  # PEM client certificate (mutual TLS)
    tls_key_file: str = ""  # PEM key of tls_cert_file


@dataclass(frozen=True, slots=True)
class LimitsSettings:
    """Per-tenant and per-document limits; exceeding one gives RESOURCE_EXHAUSTED or a failed document."""

    max_collections_per_tenant: int = 100
    max_chunks_per_document: int = 5000


@dataclass(frozen=True, slots=True)
class CacheSettings:
    """The query-embedding cache and the retrieval cache (in-process; a restart starts cold)."""

    enabled: bool = True
    embedding_ttl_s: float = 600.0  # seconds a cached query embedding lives
    embedding_max_entries: int = 10000  # query embeddings held, at most (least recent go first)
    retrieval_ttl_s: float = 60.0  # seconds a cached retrieval result lives
    retrieval_max_entries: int = 2000  # retrieval results held over all collections, at most


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """Long-term memories (AddMemories, Retrieve with use_memory)."""

    decay_rate_per_hour: float = 0.01  # retention = exp(-rate * hours / (1 + 9 * importance))
    max_per_request: int = 256  # memories per AddMemories request, at most
    weight: float = 1.0  # weight of memory ranks against document ranks when they are fused
    min_relevance: float = 0.2  # memories less relevant than this (0-1) are never returned


@dataclass(frozen=True, slots=True)
class RerankSettings:
    """The rerank stage: a cross-encoder directory or the LLM generator; neither: no reranker."""

    cross_encoder_path: str = ""  # a sentence-transformers CrossEncoder directory; none ships
    device: str = "auto"  # cross-encoder device: "auto", "cpu", "cuda" or "cuda:N"
    batch_size: int = 32  # (query, passage) pairs per cross-encoder forward pass
    llm: bool = False  # rank with the configured generator instead (needs a language model)
    max_depth: int = 200  # most hits one request may rerank


class TraceExporter(str, Enum):
    """Where finished spans go: nowhere (tracing off, no cost), stdout, or an OTLP collector."""

    NONE = "none"
    CONSOLE = "console"
    OTLP_GRPC = "otlp_grpc"
    OTLP_HTTP = "otlp_http"


@dataclass(frozen=True, slots=True)
class TracingSettings:
    """OpenTelemetry traces: a span per RPC and per pipeline stage (see README, Observability)."""

    exporter: TraceExporter = TraceExporter.NONE
    # OTLP collector; empty: http://127.0.0.1:4317 (gRPC) or http://127.0.0.1:4318/v1/traces (HTTP)
    endpoint: str = ""
    sample_ratio: float = 1.0  # share of new traces recorded; a caller's sampled flag wins
    service_name: str = "groundwire"  # the service.name resource attribute


@dataclass(frozen=True, slots=True)
class MetricsSettings:
    """The Prometheus endpoint (GET /metrics in the text format), on its own port; with several
    processes the primary's reports every process (server/telemetry/process_metrics.py)."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = 9464  # 0 picks a free port (logged)


class LogFormat(str, Enum):
    """Log record layout: text for a terminal, json (one object per line) for deployments."""

    TEXT = "text"
    JSON = "json"


@dataclass(frozen=True, slots=True)
class LoggingSettings:
    """Log layout; the level is the top-level `log_level`."""

    format: LogFormat = LogFormat.TEXT


class GeneratorKind(str, Enum):
    """Which generator answers: auto picks openai when a base_url is set, else extractive."""

    AUTO = "auto"
    EXTRACTIVE = "extractive"
    OPENAI = "openai"
    LOCAL = "local"


@dataclass(frozen=True, slots=True)
class GeneratorSettings:
    """The answer generator. The API key is read from `api_key`, `api_key_file` or the environment."""

    kind: GeneratorKind = GeneratorKind.AUTO
    base_url: str = ""
    model: str = ""
    api: str = "completions"
    api_key: str = field(default="", repr=False)
    api_key_file: str = ""
    temperature: float = 0.2
    max_tokens: int = 256
    timeout_s: float = 60.0
    max_retries: int = 2
    local_model_path: str = ""
    prompts_dir: str = ""
    # The model's context window, prompt and answer together, in its own tokens; Answer fits its
    # prompt into it. 0: the local generator's 2048, and no fitting for openai (set it there).
    context_window_tokens: int = 0
    # openai generator: prompt tokens are estimated as this many times the embedding model's count
    # (Gemma 3 on python-faq sections: 0.96 on average, 1.29 at the 99th percentile).
    prompt_token_ratio: float = 1.2
    # extractive generator: "lexical" scores sentences by keywords and passage rank, no model work;
    # "shortlist" embeds only the `extractive_candidates` sentences a cheap lexical and positional
    # ranking keeps (batched with queries); "all" embeds every sentence.
    extractive_scoring: SentenceScoring = SentenceScoring.LEXICAL
    extractive_candidates: int = DEFAULT_CANDIDATES

    def resolved_kind(self) -> GeneratorKind:
        """AUTO resolved: openai with a base_url, extractive without."""
        if self.kind is not GeneratorKind.AUTO:
            return self.kind
        return GeneratorKind.OPENAI if self.base_url else GeneratorKind.EXTRACTIVE


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the composition root needs, grouped by concern."""

    server: ServerSettings = field(default_factory=ServerSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    indexing: IndexingSettings = field(default_factory=IndexingSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    generator: GeneratorSettings = field(default_factory=GeneratorSettings)
    auth: AuthSettings = field(default_factory=AuthSettings)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    client: ClientSettings = field(default_factory=ClientSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    rerank: RerankSettings = field(default_factory=RerankSettings)
    tracing: TracingSettings = field(default_factory=TracingSettings)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    tune: TuneOptions = field(default_factory=TuneOptions)  # `groundwire tune` bounds (core/tune)
    log_level: str = "INFO"

    def replace(self, **sections: Any) -> Settings:
        """A copy with whole sections or top-level values replaced."""
        return dataclasses.replace(self, **sections)


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Build Settings from defaults, an optional TOML file and the environment; validate them."""
    env = os.environ if env is None else env
    raw: dict[str, Any] = {}
    file_path = path or (Path(env[f"{ENV_PREFIX}CONFIG"]) if f"{ENV_PREFIX}CONFIG" in env else None)
    if file_path is not None:
        raw = _read_toml(file_path)
    _merge_env(raw, env)
    settings: Settings = _build(Settings, raw, "")
    validate_settings(settings)
    return settings


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise InvalidArgument.field("config", f"settings file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidArgument.field(
            "config", f"settings file {path} is not valid TOML: {exc}"
        ) from None


def _merge_env(raw: dict[str, Any], env: Mapping[str, str]) -> None:
    for name, value in env.items():
        if not name.startswith(ENV_PREFIX) or name == f"{ENV_PREFIX}CONFIG":
            continue
        parts = name[len(ENV_PREFIX) :].lower().split("__")
        target = raw
        for part in parts[:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise InvalidArgument.field(
                    name, "conflicts with a scalar setting of the same name"
                )
        target[parts[-1]] = value


def _build(cls: type[Any], raw: Mapping[str, Any], prefix: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        where = prefix.rstrip(".") or "top level"
        raise InvalidArgument.field(
            f"{prefix}{unknown[0]}",
            f"unknown setting in {where}; known settings: {', '.join(sorted(known))}",
        )
    values: dict[str, Any] = {}
    for name, value in raw.items():
        default = getattr(cls(), name)
        values[name] = _coerce(default, value, f"{prefix}{name}")
    try:
        return cls(**values)
    except ValueError as exc:  # a section validating itself (e.g. core.tune.options)
        raise InvalidArgument.field(prefix.rstrip(".") or "settings", str(exc)) from None


def _coerce(default: Any, value: Any, name: str) -> Any:
    if dataclasses.is_dataclass(default):
        if not isinstance(value, Mapping):
            raise InvalidArgument.field(name, "must be a table of settings")
        return _build(type(default), value, f"{name}.")
    try:
        if isinstance(default, bool):
            return _to_bool(value)
        if isinstance(default, (int, float, str)) and not isinstance(default, (bool,)):
            kind = type(default)
            if hasattr(kind, "__members__"):
                return kind(str(value).lower())
            return kind(value)
    except ValueError:
        accepted = ""
        if hasattr(type(default), "__members__"):
            accepted = "; one of: " + ", ".join(m.value for m in type(default))
        raise InvalidArgument.field(
            name, f"cannot use {value!r} as {type(default).__name__}{accepted}"
        ) from None
    return value


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    lowered = str(value).strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError(value)


def validate_settings(settings: Settings) -> None:
    """Check cross-field rules; each failure names the setting and the fix."""
    checks: list[tuple[bool, str, str]] = [
        (
            0 <= settings.server.port <= 65535,
            "server.port",
            "must be 0-65535 (0 picks a free port)",
        ),
        (settings.server.max_message_bytes >= MIB, "server.max_message_bytes", "must be >= 1 MiB"),
        (settings.server.worker_threads >= 1, "server.worker_threads", "must be >= 1"),
        (
            settings.server.retrieval_threads >= 0,
            "server.retrieval_threads",
            "must be >= 0 (0: the cores shared among the server processes)",
        ),
        (
            0 <= settings.server.processes <= MAX_PROCESSES,
            "server.processes",
            f"must be 0-{MAX_PROCESSES} (0: one per available core; 1: a single process)",
        ),
        (
            settings.server.event_loop in LOOPS,
            "server.event_loop",
            f"must be one of {', '.join(LOOPS)}",
        ),
        (settings.server.shutdown_grace_s >= 0, "server.shutdown_grace_s", "must be >= 0"),
        (settings.model.batch_size >= 1, "model.batch_size", "must be >= 1"),
        (settings.model.query_batch_max >= 1, "model.query_batch_max", "must be >= 1"),
        (settings.model.query_batch_wait_ms >= 0, "model.query_batch_wait_ms", "must be >= 0"),
        (settings.model.query_queue_max >= 1, "model.query_queue_max", "must be >= 1"),
        (
            settings.model.onnx_threads >= 0,
            "model.onnx_threads",
            "must be >= 0 (0: the cores shared among the server processes)",
        ),
        (
            32 <= settings.indexing.chunk_max_tokens <= 1024,
            "indexing.chunk_max_tokens",
            "must be 32-1024",
        ),
        (settings.indexing.max_document_bytes >= 1, "indexing.max_document_bytes", "must be >= 1"),
        (
            1 <= settings.retrieval.default_top_k <= settings.retrieval.max_top_k,
            "retrieval.default_top_k",
            "must be between 1 and retrieval.max_top_k",
        ),
        (settings.retrieval.max_query_chars >= 1, "retrieval.max_query_chars", "must be >= 1"),
        (settings.retrieval.rrf_k >= 1, "retrieval.rrf_k", "must be >= 1"),
        (
            settings.retrieval.dense_weight >= 0 and settings.retrieval.lexical_weight >= 0,
            "retrieval.dense_weight",
            "fusion weights must be >= 0",
        ),
        (
            settings.retrieval.dense_weight + settings.retrieval.lexical_weight > 0,
            "retrieval.lexical_weight",
            "at least one of retrieval.dense_weight and retrieval.lexical_weight must be > 0",
        ),
        (
            0.0 <= settings.retrieval.mmr_lambda <= 1.0,
            "retrieval.mmr_lambda",
            "must be between 0 and 1 (1 = plain ranking)",
        ),
        (
            0 <= settings.retrieval.max_hits_per_document <= 100,
            "retrieval.max_hits_per_document",
            "must be between 0 and 100 (0 = no limit)",
        ),
        (
            0.0 <= settings.retrieval.section_weight <= 1.0,
            "retrieval.section_weight",
            "must be between 0 and 1",
        ),
        (
            1 <= settings.retrieval.default_budget_tokens <= settings.retrieval.max_budget_tokens,
            "retrieval.default_budget_tokens",
            "must be between 1 and retrieval.max_budget_tokens",
        ),
    ]
    server = settings.server
    checks.append(
        (
            settings.storage.backend is not StorageBackendKind.MILVUS
            or bool(settings.storage.milvus_uri),
            "storage.milvus_uri",
            'is required because storage.backend is "milvus": a milvus-lite file path or '
            "http://host:19530",
        )
    )
    checks.append(
        (
            server.processes <= 1 or settings.storage.backend is StorageBackendKind.LOCAL,
            "server.processes",
            'must be 0 or 1 with storage.backend = "milvus": run one server per replica instead '
            "(every replica serves reads and writes against Milvus)",
        )
    )
    checks += [
        (
            bool(server.tls_cert_file) == bool(server.tls_key_file),
            "server.tls_cert_file",
            "set both server.tls_cert_file and server.tls_key_file, or neither",
        ),
        (
            not server.tls_client_ca_file or bool(server.tls_cert_file),
            "server.tls_client_ca_file",
            "mutual TLS needs server TLS: set server.tls_cert_file and server.tls_key_file too",
        ),
        (
            not settings.auth.required or bool(settings.auth.keys_file),
            "auth.keys_file",
            "is required because auth.required is true; create one with `groundwire keygen`",
        ),
        (
            0 < settings.auth.keys_reload_interval_s <= 3600,
            "auth.keys_reload_interval_s",
            "must be > 0 and at most 3600 seconds (a change is picked up within this time; "
            "SIGHUP reloads at once)",
        ),
        (
            settings.limits.max_collections_per_tenant >= 1,
            "limits.max_collections_per_tenant",
            "must be >= 1",
        ),
        (
            settings.limits.max_chunks_per_document >= 1,
            "limits.max_chunks_per_document",
            "must be >= 1",
        ),
    ]
    cache, memory = settings.cache, settings.memory
    checks += [
        (cache.embedding_ttl_s > 0, "cache.embedding_ttl_s", "must be > 0 (seconds)"),
        (cache.embedding_max_entries >= 1, "cache.embedding_max_entries", "must be >= 1"),
        (cache.retrieval_ttl_s > 0, "cache.retrieval_ttl_s", "must be > 0 (seconds)"),
        (cache.retrieval_max_entries >= 1, "cache.retrieval_max_entries", "must be >= 1"),
        (
            memory.decay_rate_per_hour >= 0,
            "memory.decay_rate_per_hour",
            "must be >= 0 (0 keeps memories from fading)",
        ),
        (
            1 <= memory.max_per_request <= 10000,
            "memory.max_per_request",
            "must be between 1 and 10000",
        ),
        (0 < memory.weight < float("inf"), "memory.weight", "must be a finite number > 0"),
    ]
    rerank = settings.rerank
    checks += [
        (rerank.batch_size >= 1, "rerank.batch_size", "must be >= 1"),
        (1 <= rerank.max_depth <= 200, "rerank.max_depth", "must be between 1 and 200"),
        (
            not (rerank.cross_encoder_path and rerank.llm),
            "rerank.llm",
            "set either rerank.cross_encoder_path or rerank.llm = true, not both",
        ),
    ]
    tracing, metrics = settings.tracing, settings.metrics
    checks += [
        (
            0.0 <= tracing.sample_ratio <= 1.0,
            "tracing.sample_ratio",
            "must be between 0 and 1 (1 records every trace)",
        ),
        (
            not tracing.endpoint or tracing.endpoint.startswith(("http://", "https://")),
            "tracing.endpoint",
            "must start with http:// or https://, e.g. http://otel-collector:4317",
        ),
        (bool(tracing.service_name), "tracing.service_name", "must not be empty"),
        (
            0 <= metrics.port <= 65535,
            "metrics.port",
            "must be 0-65535 (0 picks a free port)",
        ),
        (
            not metrics.enabled or metrics.port == 0 or metrics.port != settings.server.port,
            "metrics.port",
            "must differ from server.port: metrics are served on their own port",
        ),
        (
            settings.log_level.upper() in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"},
            "log_level",
            "must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL",
        ),
    ]
    generator = settings.generator
    window = generator.context_window_tokens
    if not window and generator.resolved_kind() is GeneratorKind.LOCAL:
        window = DEFAULT_N_CTX
    checks += [
        (
            generator.api in {"completions", "chat"},
            "generator.api",
            'must be "completions" or "chat"',
        ),
        (
            generator.resolved_kind() is not GeneratorKind.OPENAI or bool(generator.base_url),
            "generator.base_url",
            "is required for the openai generator, e.g. http://127.0.0.1:8000/v1",
        ),
        (
            generator.resolved_kind() is not GeneratorKind.OPENAI or bool(generator.model),
            "generator.model",
            "is required for the openai generator (the model name the endpoint serves)",
        ),
        (0 <= generator.temperature <= 2, "generator.temperature", "must be between 0 and 2"),
        (1 <= generator.max_tokens <= 8192, "generator.max_tokens", "must be between 1 and 8192"),
        (generator.timeout_s > 0, "generator.timeout_s", "must be > 0"),
        (generator.max_retries >= 0, "generator.max_retries", "must be >= 0"),
        (
            generator.context_window_tokens == 0
            or 64 <= generator.context_window_tokens <= MAX_CONTEXT_WINDOW_TOKENS,
            "generator.context_window_tokens",
            f"must be 0 (unset) or between 64 and {MAX_CONTEXT_WINDOW_TOKENS}",
        ),
        (
            window == 0 or generator.max_tokens < window,
            "generator.max_tokens",
            f"must be less than the generator's context window ({window} tokens, "
            "generator.context_window_tokens), to leave room for the prompt",
        ),
        (
            0.25 <= generator.prompt_token_ratio <= 4,
            "generator.prompt_token_ratio",
            "must be between 0.25 and 4",
        ),
        (
            4 <= generator.extractive_candidates <= 256,
            "generator.extractive_candidates",
            "must be between 4 (the sentences an extractive answer quotes) and 256",
        ),
    ]
    for ok, name, fix in checks:
        if not ok:
            raise InvalidArgument.field(name, fix)
