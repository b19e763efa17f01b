"""The `groundwire` command: serve, index, query, answer, keygen, eval."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from core.errors import InvalidArgument
from server.commands.client_channel import Endpoint
from server.request_context import configure_logging
from server.settings import Settings, load_settings

DEFAULT_TARGET = "127.0.0.1:50051"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groundwire", description="Retrieval-augmented generation over gRPC."
    )
    parser.add_argument(
        "--config", type=Path, help="settings TOML file (default: $GROUNDWIRE_CONFIG)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser(
        "serve", help="run the gRPC server (embedded default: ./groundwire-data, bundled model)"
    )
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--data-dir")
    serve.add_argument("--device", help="auto | cpu | cuda | cuda:N")
    index = sub.add_parser(
        "index",
        help="index files and folders into a collection",
        description="Send Markdown, text, reST, HTML and PDF files (folders recursively, hidden "
        "ones ignored) and print a per-format summary; exits 1 when a document failed.",
    )
    index.add_argument("paths", nargs="+")
    index.add_argument("--collection", default="default")
    index.add_argument("--target", default=DEFAULT_TARGET)
    index.add_argument(
        "--no-progress", action="store_true", help="no progress bar (it is off when not a TTY)"
    )
    query = sub.add_parser("query", help="retrieve hits for a question")
    query.add_argument("text")
    query.add_argument("--collection", default="")
    query.add_argument("--top-k", type=int, default=5)
    query.add_argument("--mode", choices=["dense", "lexical", "hybrid"])
    query.add_argument("--fusion", choices=["rrf", "weighted", "max", "dbsf"])
    query.add_argument("--json", action="store_true")
    query.add_argument("--target", default=DEFAULT_TARGET)
    answer = sub.add_parser("answer", help="stream a cited answer")
    answer.add_argument("text")
    answer.add_argument("--collection", default="")
    answer.add_argument("--target", default=DEFAULT_TARGET)
    keygen = sub.add_parser("keygen", help="make an API key and print its keys-file entry")
    keygen.add_argument("--tenant", required=True)
    keygen.add_argument("--role", choices=["reader", "writer", "admin"], required=True)
    keygen.add_argument("--id", dest="key_id", required=True, help="a name for the key")
    evaluate = sub.add_parser("eval", help="IR metrics on a BEIR-layout dataset")
    evaluate.add_argument("--dataset", type=Path, required=True)
    evaluate.add_argument("--json", action="store_true")
    evaluate.add_argument("--output", type=Path, help="also write the JSON report here")
    evaluate.add_argument(
        "--embedding-cache", type=Path, help="SQLite file caching document vectors between runs"
    )
    return parser


def _serve_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    server = settings.server
    if args.host:
        server = dataclasses.replace(server, host=args.host)
    if args.port is not None:
        server = dataclasses.replace(server, port=args.port)
    storage = (
        dataclasses.replace(settings.storage, data_dir=args.data_dir)
        if args.data_dir
        else settings.storage
    )
    model = (
        dataclasses.replace(settings.model, device=args.device) if args.device else settings.model
    )
    return settings.replace(server=server, storage=storage, model=model)


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

        asyncio.run(serve(_serve_settings(settings, args)))
    elif args.command == "index":
        from server.commands.index_command import run_index

        run_index(
            Endpoint(args.target, settings.client),
            args.collection,
            args.paths,
            progress=not args.no_progress,
        )
    elif args.command == "query":
        from server.commands.query_command import build_request, run_query

        run_query(
            Endpoint(args.target, settings.client),
            build_request(args.text, args.collection, args.top_k, args.mode, args.fusion),
            args.json,
        )
    elif args.command == "answer":
        from groundwire.v1 import retrieval_service_pb2 as rs
        from server.commands.answer_command import run_answer

        run_answer(
            Endpoint(args.target, settings.client),
            rs.AnswerRequest(
                retrieve=rs.RetrieveRequest(query=args.text, collection=args.collection)
            ),
        )
    elif args.command == "keygen":
        from server.commands.keygen_command import run_keygen

        run_keygen(args.tenant, args.role, args.key_id)
    elif args.command == "eval":
        from server.commands.eval_command import run_eval

        run_eval(settings, args.dataset, args.json, args.output, args.embedding_cache)


if __name__ == "__main__":
    main()
