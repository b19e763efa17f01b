"""The composition root: builds core services from Settings and owns their lifetime."""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from core.answer.answer_service import AnswerService
from core.answer.prompts import PromptLibrary, default_prompts_dir
from core.cache.query_embedding_cache import QueryEmbeddingCache
from core.cache.retrieval_cache import RetrievalCache
from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.follower_backend import FollowerBackend
from core.catalog.maintenance import CollectionMaintenance
from core.catalog.model_check import ModelCheck
from core.dense.faiss_index import DenseIndexSpec
from core.embed.bundled_model import default_model_path
from core.embed.device import select_device
from core.embed.embedder_factory import build_embedder
from core.embed.lazy_embedder import without_loading
from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.onnx_build import cache_root as onnx_cache_root
from core.embed.onnx_embedder import import_onnxruntime
from core.embed.protocol import Embedder
from core.errors import IndexNotReady
from core.indexer import Indexer
from core.models import Document, SourceType
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.post_fusion import MemoryOptions
from core.retrieve.request import RetrievalResult
from core.tune.collection_embedders import CollectionEmbedders
from core.tune.tuner import CollectionTuner
from server.generator_factory import build_context_window, build_generator
from server.process_count import (
    available_cores,
    query_model_threads,
    resolved_processes,
    retrieval_threads,
)
from server.reranker_factory import build_reranker
from server.settings import Settings
from server.storage_factory import build_storage_backend

if TYPE_CHECKING:
    from server.reader_caches import ReaderCaches

logger = logging.getLogger(__name__)

DEMO_CORPUS = Path(__file__).parent / "demo_corpus"


class Runtime:
    """Everything a running server needs; `load()` does the slow part, `close()` releases it."""

    def __init__(self, settings: Settings, follower: bool = False) -> None:
        """`follower`: this process only reads the data directory, which another server
        process writes (server.processes > 1); collections follow that process's writes."""
        self.settings = settings
        self.follower = follower
        self.executor = ThreadPoolExecutor(
            settings.server.worker_threads, thread_name_prefix="gw-work"
        )
        self.processes = resolved_processes(settings)
        """Server processes sharing the port, this one included (`server.processes` resolved)."""
        searchers = retrieval_threads(settings, self.processes)
        self.retrieval_executor = ThreadPoolExecutor(searchers, thread_name_prefix="gw-retrieve")
        """Retrieve's stages before and after its awaited query embedding; sized to the cores,
        apart from `executor`, so a long Ingest or Answer step never holds them."""
        # Separate pool: remote lexical searches (Milvus) overlap the other stages here; local
        # ones run on the retrieval thread that reads them (core/retrieve/pending_search.py).
        self.lexical_executor = ThreadPoolExecutor(searchers, thread_name_prefix="gw-lexical")
        self.catalog = CollectionCatalog(
            Path(settings.storage.data_dir),
            settings.limits.max_collections_per_tenant,
            backend=FollowerBackend() if follower else build_storage_backend(settings.storage),
        )
        self._ready = threading.Event()
        self._maintenance = CollectionMaintenance(self.catalog)
        self.embedding_cache: QueryEmbeddingCache | None = None
        self.retrieval_cache: RetrievalCache[RetrievalResult] | None = None
        self._embedder: MicroBatchingEmbedder | None = None
        self._indexer: Indexer | None = None
        self._pipeline: RetrievalPipeline | None = None
        self._answers: AnswerService | None = None
        self._model_check: ModelCheck | None = None
        self._embedders: CollectionEmbedders | None = None
        self._tuner: CollectionTuner | None = None
        self.reader_caches: ReaderCaches | None = None
        """The reader processes' caches, which ClearCache clears and Stats counts too (set in the
        primary of several processes, server/commands/serve_command.py)."""
        prompts_dir = (
            Path(settings.generator.prompts_dir)
            if settings.generator.prompts_dir
            else default_prompts_dir()
        )
        self.prompts = PromptLibrary.load(
            prompts_dir
        )  # a broken template fails start-up, not a request
        if settings.model.runtime.is_onnx:
            import_onnxruntime()  # without it, fail start-up naming the pip command

    def load(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Load the model, open collections (replaying indexes) and seed the demo corpus if asked.

        `loop` is the server's event loop, on which an LLM reranker runs its generations.
        """
        if self.ready:
            return
        choice = select_device(self.settings.model.device)
        logger.info("embedding device: %s (%s)", choice.device, choice.reason)
        self.catalog.device = choice.device  # dense engines follow the model (engine_factory)
        path = self.settings.model.embedding_model_path or default_model_path()
        model = self.settings.model
        threads = query_model_threads(model.onnx_threads, self.processes)
        logger.info(
            "query model: %d onnxruntime thread(s) in each of %d process(es)",
            threads,
            self.processes,
        )
        embedder = build_embedder(
            path,
            model.runtime,
            device=choice.device,
            batch_size=model.batch_size,
            cuda_graphs=model.cuda_graphs,
            onnx_cache=onnx_cache_root(model.onnx_cache_dir),
            onnx_threads=threads,
            document_threads=available_cores(),  # ingest: every core, one process writes
            lazy_documents=self.follower,  # a reader embeds queries only (server.processes)
        )
        self._embedder = MicroBatchingEmbedder(
            embedder,
            max_batch=model.query_batch_max,
            max_wait_ms=model.query_batch_wait_ms,
            max_queue=model.query_queue_max,
        )
        cache = self.settings.cache
        queries: Embedder = self._embedder
        if cache.enabled:
            self.embedding_cache = QueryEmbeddingCache(
                self._embedder, cache.embedding_ttl_s, cache.embedding_max_entries
            )
            self.retrieval_cache = RetrievalCache(
                cache.retrieval_ttl_s, cache.retrieval_max_entries
            )
            queries = self.embedding_cache
        embedding_cache = self.embedding_cache

        def tuned_queries(tuned: Embedder) -> Embedder:
            """A tuned model's queries share the server's query cache (keyed by model)."""
            return tuned if embedding_cache is None else embedding_cache.for_embedder(tuned)

        def load_tuned(tuned: str) -> Embedder:
            """A collection's tuned model (torch, imported only when one is served)."""
            from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder

            return SentenceTransformerEmbedder(
                tuned, choice.device, model.batch_size, cuda_graphs=model.cuda_graphs
            )

        embedders = self._embedders = CollectionEmbedders(
            self._embedder,
            load_tuned,
            base_queries=queries,
            wrap_queries=tuned_queries,
        )
        self._tuner = CollectionTuner(embedders, choice.device, path)

        def checked_by(collection: Collection) -> Embedder:
            """The collection's model for the model check: a reader's lazy base model is
            checked by its loaded ONNX twin instead of being loaded for it."""
            served = embedders(collection)
            stand_in = without_loading(embedder)
            return stand_in if served is embedders.base and stand_in is not embedder else served

        model_check = self._model_check = ModelCheck(self._embedder, checked_by)
        self._indexer = Indexer(
            self._embedder,
            self.settings.indexing.chunk_max_tokens,
            self.settings.indexing.max_document_bytes,
            self.settings.limits.max_chunks_per_document,
            model_check=model_check,
            embedders=embedders,
        )
        generator = build_generator(self.settings.generator, self._embedder)
        memory = self.settings.memory
        self._pipeline = RetrievalPipeline(
            self.catalog,
            queries,
            self.lexical_executor,
            cache=self.retrieval_cache,
            reranker=build_reranker(self.settings.rerank, generator, loop),
            memory=MemoryOptions(memory.decay_rate_per_hour, memory.weight, memory.min_relevance),
            model_check=model_check,
            query_embedders=embedders.queries,
        )
        window = build_context_window(self.settings.generator, generator, self._embedder)
        self._answers = AnswerService(
            lambda: self.pipeline, generator, self.prompts, self.executor, window
        )
        self.catalog.open_all()
        if not self.follower:  # the writing process clears leftovers and seeds the demo
            self._maintenance.clear_leftovers()
            if self.settings.storage.seed_demo_corpus:
                self._seed_demo()
        self._ready.set()
        logger.info("ready: %d collection(s) loaded", len(self.catalog.all()))

    @property
    def ready(self) -> bool:
        """True once load() finished."""
        return self._ready.is_set()

    @property
    def embedder(self) -> Embedder:
        """The embedding model; IndexNotReady until loaded."""
        self.require_ready()
        assert self._embedder is not None
        return self._embedder

    @property
    def indexer(self) -> Indexer:
        """The ingestion service; IndexNotReady until loaded."""
        self.require_ready()
        assert self._indexer is not None
        return self._indexer

    @property
    def pipeline(self) -> RetrievalPipeline:
        """The retrieval pipeline; IndexNotReady until loaded."""
        self.require_ready()
        assert self._pipeline is not None
        return self._pipeline

    @property
    def answers(self) -> AnswerService:
        """The answer service; IndexNotReady until loaded."""
        self.require_ready()
        assert self._answers is not None
        return self._answers

    @property
    def model_check(self) -> ModelCheck:
        """Whether a collection was indexed with the served model; IndexNotReady until loaded."""
        self.require_ready()
        assert self._model_check is not None
        return self._model_check

    @property
    def embedders(self) -> CollectionEmbedders:
        """Each collection's embedding model (a tuned one has its own); IndexNotReady until
        loaded."""
        self.require_ready()
        assert self._embedders is not None
        return self._embedders

    @property
    def tuner(self) -> CollectionTuner:
        """Fine-tunes a collection's model copy (core/tune); IndexNotReady until loaded."""
        self.require_ready()
        assert self._tuner is not None
        return self._tuner

    @property
    def maintenance(self) -> CollectionMaintenance:
        """Compaction, snapshots and restores; IndexNotReady until loaded (start-up clears what
        interrupted ones left behind, so none may run before)."""
        self.require_ready()
        return self._maintenance

    def new_collection_config(self, **overrides: object) -> CollectionConfig:
        """A CollectionConfig for the loaded model with server defaults, overridable per field."""
        embedder = self._embedder
        assert embedder is not None
        base = {
            "dense": DenseIndexSpec(),
            "chunk_max_tokens": self.settings.indexing.chunk_max_tokens,
            "description": "",
            "embedding_model": embedder.model_name,
            "embedding_dim": embedder.dimension,
        }
        base.update(overrides)
        return CollectionConfig(**base)  # type: ignore[arg-type]

    async def aclose_generator(self) -> None:
        """Release the generator's connections or model (on the loop that used them)."""
        if self._answers is not None:
            await self._answers.generator.aclose()

    def close(self) -> None:
        """Persist indexes and stop worker threads."""
        self._ready.clear()
        if self._embedder is not None:
            self._embedder.close()
        self.catalog.close()
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.retrieval_executor.shutdown(wait=True, cancel_futures=True)
        self.lexical_executor.shutdown(wait=True, cancel_futures=True)

    def require_ready(self) -> None:
        """IndexNotReady until load() finished (the edge checks it for RPCs that need it)."""
        if not self._ready.is_set():
            raise IndexNotReady("the server is still loading its indexes; retry in a moment")

    def _seed_demo(self) -> None:
        name = self.settings.storage.default_collection
        assert self._indexer is not None
        collection: Collection = self.catalog.get_or_create(
            DEFAULT_TENANT,
            name,
            self.new_collection_config(description="bundled demo corpus: Python FAQ"),
        )
        documents, _ = collection.store.counts()
        if documents:
            return
        files = sorted(DEMO_CORPUS.glob("*.md"))
        files = [f for f in files if f.name != "README.md"]
        logger.info("default collection %r is empty: indexing %d demo documents", name, len(files))
        docs = [
            Document(
                document_id=f.stem,
                text=f.read_text("utf-8"),
                source_type=SourceType.MARKDOWN,
                source_path=f"demo_corpus/{f.name}",
            )
            for f in files
        ]
        outcomes = self._indexer.index(collection, docs)
        collection.checkpoint()
        logger.info("demo corpus indexed: %d chunks", sum(o.chunk_count for o in outcomes))
