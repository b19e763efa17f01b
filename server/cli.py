"""The `groundwire` command: serve, index, query, answer, keygen, eval, tune."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

from core.errors import InvalidArgument
from groundwire.retrieve_options import RetrieveOptions
from server import event_loop
from server.commands.client_channel import Endpoint
from server.request_context import configure_logging
from server.settings import Settings, load_settings, validate_settings

DEFAULT_TARGET = "127.0.0.1:50051"


TARGET_HELP = f"host:port of the groundwire server (default: {DEFAULT_TARGET})"
COLLECTION_HELP = "collection to search (default: the default collection)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groundwire", description="Retrieval-augmented generation over gRPC."
    )
    parser.add_argument(
        "--config", type=Path, help="settings TOML file (default: $GROUNDWIRE_CONFIG)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _add_serve(sub)
    _add_index(sub)
    _add_query(sub)
    _add_answer(sub)
    _add_keygen(sub)
    _add_eval(sub)
    _add_tune(sub)
    return parser


Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _add_serve(sub: Subparsers) -> None:
    serve = sub.add_parser(
        "serve", help="run the gRPC server (embedded default: ./groundwire-data, bundled model)"
    )
    serve.add_argument("--host", help="address to listen on (default: server.host, 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, help="port to listen on; 0 picks a free one (default: server.port)"
    )
    serve.add_argument(
        "--data-dir", help="directory holding the collections (default: storage.data_dir)"
    )
    serve.add_argument(
        "--device", help="embedding device: auto | cpu | cuda | cuda:N (default: model.device)"
    )
    serve.add_argument(
        "--processes",
        type=int,
        help="server processes sharing the port; one writes, the others serve reads; "
        "0 = one per available core (default: server.processes, 0)",
    )


def _add_index(sub: Subparsers) -> None:
    index = sub.add_parser(
        "index",
        help="index files and folders into a collection",
        description="Send Markdown, text, reST, HTML and PDF files (folders recursively, hidden "
        "ones ignored) and print a per-format summary; exits 1 when a document failed.",
    )
    index.add_argument("paths", nargs="+", help="files and folders to index")
    index.add_argument(
        "--collection",
        default="default",
        help="collection to index into; created when missing (default: default)",
    )
    index.add_argument("--target", default=DEFAULT_TARGET, help=TARGET_HELP)
    index.add_argument(
        "--no-progress", action="store_true", help="no progress bar (it is off when not a TTY)"
    )


def _add_retrieve_options(command: argparse.ArgumentParser, top_k: int | None) -> None:
    command.add_argument("--collection", default="", help=COLLECTION_HELP)
    shown = "the server's, 10" if top_k is None else str(top_k)
    command.add_argument(
        "--top-k", type=int, default=top_k, help=f"number of hits to retrieve (default: {shown})"
    )
    command.add_argument(
        "--mode",
        choices=["dense", "lexical", "hybrid"],
        help="retrieval mode (default: the server's, hybrid)",
    )
    command.add_argument(
        "--fusion",
        choices=["rrf", "weighted", "max", "dbsf"],
        help="how hybrid mode fuses the dense and lexical lists (default: the server's)",
    )
    command.add_argument("--target", default=DEFAULT_TARGET, help=TARGET_HELP)


def _add_query(sub: Subparsers) -> None:
    query = sub.add_parser("query", help="retrieve hits for a question")
    query.add_argument("text", help="the question or search text")
    _add_retrieve_options(query, top_k=5)
    query.add_argument(
        "--json", action="store_true", help="print the whole RetrieveResponse as JSON"
    )


def _add_answer(sub: Subparsers) -> None:
    answer = sub.add_parser("answer", help="stream a cited answer")
    answer.add_argument("text", help="the question")
    _add_retrieve_options(answer, top_k=None)
    answer.add_argument(
        "--template",
        default="",
        help="prompt template: qa, code_qa, summarize or another installed one (default: the server's "
        "choice for the question)",
    )
    answer.add_argument(
        "--max-tokens", type=int, help="most tokens to generate (default: the generator's)"
    )
    answer.add_argument(
        "--temperature", type=float, help="sampling temperature (default: the generator's)"
    )
    answer.add_argument(
        "--rewrite",
        action="store_true",
        help="let the generator rewrite the question into search queries first",
    )
    answer.add_argument(
        "--json",
        action="store_true",
        help="print each stream event (started, delta, summary) as one JSON object per line",
    )


def _add_keygen(sub: Subparsers) -> None:
    keygen = sub.add_parser("keygen", help="make an API key and print its keys-file entry")
    keygen.add_argument("--tenant", required=True, help="tenant the key belongs to")
    keygen.add_argument(
        "--role",
        choices=["reader", "writer", "admin"],
        required=True,
        help="what the key may do: reader (search), writer (+ index), admin (+ maintenance)",
    )
    keygen.add_argument("--id", dest="key_id", required=True, help="a name for the key")


def _add_eval(sub: Subparsers) -> None:
    evaluate = sub.add_parser("eval", help="IR metrics on a BEIR-layout dataset")
    evaluate.add_argument(
        "--dataset",
        type=Path,
        required=True,
        help="folder with corpus.jsonl, queries.jsonl and qrels/test.tsv",
    )
    evaluate.add_argument("--json", action="store_true", help="print the report as JSON")
    evaluate.add_argument("--output", type=Path, help="also write the JSON report here")
    evaluate.add_argument(
        "--embedding-cache", type=Path, help="SQLite file caching document vectors between runs"
    )
    evaluate.add_argument(
        "--subset",
        metavar="PREFIX",
        help="keep only the documents whose id starts with PREFIX (plus --distractors others)",
    )
    evaluate.add_argument(
        "--distractors", type=int, default=0, help="with --subset: other documents kept (seeded)"
    )
    evaluate.add_argument(
        "--tune",
        action="store_true",
        help="also tune a copy of the collection (settings `tune`) and score it",
    )
    evaluate.add_argument(
        "--markdown",
        action="store_true",
        help="read each document's text as Markdown, split at its own headings (default: plain"
        " text, one section per document)",
    )


def _add_tune(sub: Subparsers) -> None:
    tune = sub.add_parser(
        "tune",
        help="fine-tune a collection's own copy of the embedding model and re-embed it (admin)",
    )
    tune.add_argument("--collection", default="", help="collection to tune (default: default)")
    tune.add_argument("--max-steps", type=int, help="most optimizer steps (server: tune.max_steps)")
    tune.add_argument("--max-epochs", type=int, help="most epochs (server: tune.max_epochs)")
    tune.add_argument("--max-pairs", type=int, help="most training pairs (server: tune.max_pairs)")
    tune.add_argument("--max-seconds", type=float, help="most training seconds")
    tune.add_argument("--json", action="store_true", help="print the response as JSON")
    tune.add_argument("--target", default=DEFAULT_TARGET, help=TARGET_HELP)


def _serve_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    server = settings.server
    if args.host:
        server = dataclasses.replace(server, host=args.host)
    if args.port is not None:
        server = dataclasses.replace(server, port=args.port)
    if args.processes is not None:
        server = dataclasses.replace(server, processes=args.processes)
    storage = (
        dataclasses.replace(settings.storage, data_dir=args.data_dir)
        if args.data_dir
        else settings.storage
    )
    model = (
        dataclasses.replace(settings.model, device=args.device) if args.device else settings.model
    )
    changed = settings.replace(server=server, storage=storage, model=model)
    validate_settings(changed)  # e.g. --processes out of range names the setting
    return changed


def _retrieve_options(args: argparse.Namespace) -> RetrieveOptions:
    return {
        "collection": args.collection,
        "top_k": args.top_k,
        "mode": args.mode,
        "fusion": args.fusion,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point."""
    args = _parser().parse_args(argv)
    try:
        settings = load_settings(args.config)
    except InvalidArgument as exc:
        sys.exit(f"error: invalid settings: {exc}")
    configure_logging(settings.log_level, settings.logging.format)
    if args.command == "serve":
        from server.commands.serve_command import serve

        try:
            serving = _serve_settings(settings, args)
        except InvalidArgument as exc:
            sys.exit(f"error: invalid settings: {exc}")
        event_loop.run(serve(serving), serving.server.event_loop)
    elif args.command == "index":
        from server.commands.index_command import run_index

        run_index(
            Endpoint(args.target, settings.client),
            args.collection,
            args.paths,
            progress=not args.no_progress,
        )
    elif args.command == "query":
        from server.commands.query_command import run_query

        run_query(
            Endpoint(args.target, settings.client), args.text, _retrieve_options(args), args.json
        )
    elif args.command == "answer":
        from server.commands.answer_command import run_answer

        run_answer(
            Endpoint(args.target, settings.client),
            args.text,
            _retrieve_options(args),
            {
                "template": args.template,
                "temperature": args.temperature,
                "max_tokens": args.max_tokens,
                "rewrite": args.rewrite,
            },
            args.json,
        )
    elif args.command == "keygen":
        from server.commands.keygen_command import run_keygen

        run_keygen(args.tenant, args.role, args.key_id)
    elif args.command == "eval":
        from server.commands.eval_command import run_eval

        run_eval(
            settings,
            args.dataset,
            args.json,
            args.output,
            args.embedding_cache,
            subset_of=(args.subset, args.distractors) if args.subset else None,
            tune=args.tune,
            markdown=args.markdown,
        )

    elif args.command == "tune":
        from server.commands.tune_command import run_tune

        bounds = {
            "max_steps": args.max_steps,
            "max_epochs": args.max_epochs,
            "max_pairs": args.max_pairs,
            "max_seconds": args.max_seconds,
        }
        run_tune(Endpoint(args.target, settings.client), args.collection, bounds, args.json)


if __name__ == "__main__":
    main()
