"""`groundwire index PATH...`: stream files to a running server with a progress bar and a summary."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import grpc
from tqdm import tqdm

from core.models import SourceType
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from server.commands.client_channel import exit_on_rpc_error, open_channel

SUFFIXES = {".md", ".markdown", ".mdx", ".txt", ".text", ".rst", ".html", ".htm", ".pdf"}
BATCH = 16
_TYPE_NUMBER = {
    SourceType.MARKDOWN: common.SOURCE_TYPE_MARKDOWN,
    SourceType.TEXT: common.SOURCE_TYPE_TEXT,
    SourceType.HTML: common.SOURCE_TYPE_HTML,
    SourceType.PDF: common.SOURCE_TYPE_PDF,
}


def discover(paths: Sequence[str]) -> list[tuple[Path, Path]]:
    """(file, root) pairs for every file with a known suffix; ids are made relative to root."""
    found: list[tuple[Path, Path]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(
                (f, path)
                for f in sorted(path.rglob("*"))
                if f.is_file() and f.suffix.lower() in SUFFIXES
            )
        elif path.is_file():
            found.append((path, path.parent))
        else:
            raise SystemExit(f"error: {raw} does not exist")
    return found


def _document(file: Path, root: Path) -> common.Document:
    kind = SourceType.from_path(file.name)
    doc = common.Document(
        document_id=file.relative_to(root).as_posix(),
        source_type=_TYPE_NUMBER[kind],
        source_path=str(file),
    )
    if kind is SourceType.PDF:
        doc.content = file.read_bytes()
    else:
        doc.text = file.read_text("utf-8", errors="replace")
    return doc


def _requests(
    files: list[tuple[Path, Path]], collection: str, bar: tqdm
) -> Iterator[ix.UpsertDocumentsRequest]:
    for start in range(0, len(files), BATCH):
        batch = files[start : start + BATCH]
        yield ix.UpsertDocumentsRequest(
            collection=collection, documents=[_document(f, r) for f, r in batch]
        )
        bar.update(len(batch))


def run_index(target: str, collection: str, paths: Sequence[str]) -> None:
    """Create the collection if needed, stream the files, print the summary."""
    files = discover(paths)
    if not files:
        raise SystemExit("error: no Markdown, text, HTML or PDF files found")
    stub = ix_grpc.IndexServiceStub(open_channel(target))
    try:
        stub.CreateCollection(ix.CreateCollectionRequest(name=collection))
    except grpc.RpcError as error:
        if error.code() is not grpc.StatusCode.ALREADY_EXISTS:
            exit_on_rpc_error(error)
    started = time.perf_counter()
    with tqdm(total=len(files), unit="doc", desc=f"indexing into {collection}") as bar:
        try:
            response = stub.UpsertDocuments(_requests(files, collection, bar))
        except grpc.RpcError as error:
            exit_on_rpc_error(error)
    elapsed = time.perf_counter() - started
    _print_summary(files, response, elapsed)


def _print_summary(
    files: list[tuple[Path, Path]], response: ix.UpsertDocumentsResponse, elapsed: float
) -> None:
    formats: Counter[str] = Counter(SourceType.from_path(f.name).value for f, _ in files)
    print(
        f"{len(files)} files in {elapsed:.1f}s: {response.upserted} upserted, {response.unchanged} unchanged, "
        f"{response.failed} failed; {response.chunks_written} chunks ({response.chunks_written / max(elapsed, 1e-9):.1f}/s)"
    )
    print("by format: " + ", ".join(f"{k} {v}" for k, v in sorted(formats.items())))
    for result in response.results:
        if result.outcome == ix.DOCUMENT_OUTCOME_FAILED:
            print(f"  failed {result.document_id}: {result.error}")
