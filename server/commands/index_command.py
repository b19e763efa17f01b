"""`groundwire index PATH...`: send files to a running server with a progress bar and a summary.

Folders are walked recursively; Markdown, text, reStructuredText, HTML and PDF files are sent,
other files are counted as skipped, hidden files and folders (".git") are ignored. Files go in
batches of one format, one UpsertDocuments call per batch, so the bar moves as the server
acknowledges and each format's time is its own. Exits 1 when any document failed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from tqdm import tqdm

from core.models import SUFFIXES as SOURCE_SUFFIXES
from core.models import SourceType
from groundwire import Client, GroundwireError
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from server.commands.client_channel import Endpoint, exit_on_error, open_client
from server.commands.index_summary import FORMATS, IndexSummary, count_flags

SUFFIXES = {suffix: kind for suffixes, kind in SOURCE_SUFFIXES for suffix in suffixes}
BATCH_FILES = 16
BATCH_BYTES = 8 * 1024 * 1024
CALL_TIMEOUT_S = 600
# A call rejected as a whole for one of these is retried one document at a time.
_PER_DOCUMENT_CODES = {grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INVALID_ARGUMENT}
_TYPE_NUMBER = {
    SourceType.MARKDOWN: common.SOURCE_TYPE_MARKDOWN,
    SourceType.TEXT: common.SOURCE_TYPE_TEXT,
    SourceType.HTML: common.SOURCE_TYPE_HTML,
    SourceType.PDF: common.SOURCE_TYPE_PDF,
}


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file to send: where it is, the document id it gets, its format and size."""

    path: Path
    document_id: str
    kind: SourceType
    size: int


def discover(paths: Sequence[str], summary: IndexSummary) -> list[SourceFile]:
    """Supported files under `paths`, by format then id; unsupported ones counted in `summary`.

    Ids are paths relative to the folder given (a file given directly: its name).
    """
    found: list[SourceFile] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            candidates = [
                (f, f.relative_to(path).as_posix())
                for f in sorted(path.rglob("*"))
                if f.is_file() and not _hidden(f.relative_to(path))
            ]
        elif path.is_file():
            candidates = [(path, path.name)]
        else:
            raise SystemExit(f"error: {raw} does not exist")
        for file, document_id in candidates:
            kind = SUFFIXES.get(file.suffix.lower())
            if kind is None:
                summary.skipped[file.suffix.lower() or "(none)"] += 1
            else:
                found.append(SourceFile(file, document_id, kind, file.stat().st_size))
    _reject_duplicate_ids(found)
    return sorted(found, key=lambda f: (FORMATS.index(f.kind), f.document_id))


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def _reject_duplicate_ids(files: Sequence[SourceFile]) -> None:
    seen: dict[str, Path] = {}
    for file in files:
        if file.document_id in seen:
            raise SystemExit(
                f"error: {seen[file.document_id]} and {file.path} would both be document "
                f"{file.document_id!r}; index them into separate collections or pass their "
                "common parent folder"
            )
        seen[file.document_id] = file.path


def batches(files: Sequence[SourceFile]) -> Iterator[list[SourceFile]]:
    """Consecutive runs of one format, at most BATCH_FILES files and about BATCH_BYTES each."""
    batch: list[SourceFile] = []
    size = 0
    for file in files:
        if batch and (
            file.kind is not batch[0].kind
            or len(batch) == BATCH_FILES
            or size + file.size > BATCH_BYTES
        ):
            yield batch
            batch, size = [], 0
        batch.append(file)
        size += file.size
    if batch:
        yield batch


def _document(file: SourceFile) -> common.Document:
    doc = common.Document(
        document_id=file.document_id,
        source_type=_TYPE_NUMBER[file.kind],
        source_path=str(file.path),
    )
    if file.kind is SourceType.PDF:
        doc.content = file.path.read_bytes()
    else:
        doc.text = file.path.read_text("utf-8", errors="replace")
    return doc


class _Sender:
    """Sends batches and records every outcome in the summary."""

    def __init__(self, client: Client, summary: IndexSummary) -> None:
        self._client = client
        self._summary = summary

    def send(self, batch: list[SourceFile]) -> None:
        """Upsert one batch (one format); time it against that format."""
        started = time.perf_counter()
        documents: list[common.Document] = []
        readable: list[SourceFile] = []
        for file in batch:
            try:
                documents.append(_document(file))
                readable.append(file)
            except OSError as exc:
                self._failed(file, f"cannot read {file.path}: {exc.strerror or exc}")
        if documents:
            self._upsert(readable, documents)
        tally = self._summary.tally(batch[0].kind)
        tally.files += len(batch)
        tally.seconds += time.perf_counter() - started

    def _upsert(self, files: list[SourceFile], documents: list[common.Document]) -> None:
        try:
            response = self._client.upsert_documents(
                documents,
                collection=self._summary.collection,
                batch_size=BATCH_FILES,
                timeout=CALL_TIMEOUT_S,
            )
        except GroundwireError as error:
            if error.code not in _PER_DOCUMENT_CODES:
                raise
            if len(documents) > 1:
                for file, document in zip(files, documents, strict=True):
                    self._upsert([file], [document])
            else:
                self._failed(files[0], f"{error.code.name}: {error.message}")
            return
        for file, result in zip(files, response.results, strict=True):
            self._record(file, result)

    def _record(self, file: SourceFile, result: ix.DocumentResult) -> None:
        tally = self._summary.tally(file.kind)
        if result.outcome == ix.DOCUMENT_OUTCOME_FAILED:
            self._failed(file, result.error)
            return
        if result.outcome == ix.DOCUMENT_OUTCOME_UNCHANGED:
            tally.unchanged += 1
        else:
            tally.upserted += 1
            tally.chunks += result.chunk_count
        tally.risk_flags.update(count_flags([result.risk_flags]))

    def _failed(self, file: SourceFile, error: str) -> None:
        self._summary.tally(file.kind).failed += 1
        self._summary.failures.append((file.document_id, error))


def run_index(
    endpoint: Endpoint, collection: str, paths: Sequence[str], progress: bool = True
) -> None:
    """Create the collection if needed, send the files, print the per-format summary."""
    summary = IndexSummary(collection)
    files = discover(paths, summary)
    if not files:
        raise SystemExit("error: no Markdown, text, HTML or PDF files found")
    with open_client(endpoint, CALL_TIMEOUT_S) as client:
        _send_all(client, collection, files, summary, progress)


def _send_all(
    client: Client, collection: str, files: list[SourceFile], summary: IndexSummary, progress: bool
) -> None:
    """Create the collection unless it exists, send every batch, print the summary."""
    try:
        client.create_collection(collection, exist_ok=True)
    except GroundwireError as error:
        exit_on_error(error)
    sender = _Sender(client, summary)
    started = time.perf_counter()
    show = progress and sys.stderr.isatty()
    with tqdm(
        total=len(files), unit="file", desc=f"indexing into {collection}", disable=not show
    ) as bar:
        for batch in batches(files):
            try:
                sender.send(batch)
            except GroundwireError as error:
                bar.close()
                summary.elapsed_s = time.perf_counter() - started
                print("\n".join(summary.lines()))
                exit_on_error(error)
            bar.update(len(batch))
            bar.set_postfix(failed=len(summary.failures), refresh=False)
    summary.elapsed_s = time.perf_counter() - started
    print("\n".join(summary.lines()))
    if summary.failures:
        count = len(summary.failures)
        sys.exit(f"error: {count} of {len(files)} documents failed; see the list above")
