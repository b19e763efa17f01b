"""Retrieval quality on a labelled FAQ set (BEIR layout) for every configuration `groundwire eval`
compares, the whole-section baseline computed in the same run.

Run: .venv/bin/python benchmarks/quality/python_faq.py [--dataset DIR] [--name NAME]
         [--embedding-cache FILE] [--subset PREFIX --distractors N]
Prints the table and writes benchmarks/results/<NAME>_quality.{json,md} (NAME: python_faq).
The first full run embeds python-faq's ~19,500 chunks and 5,093 sections (20-40 minutes on 2
CPU cores); --embedding-cache makes later runs take minutes. --subset keeps the documents whose
id starts with PREFIX (the FAQ pages) plus N random others: a quicker, easier run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))

from benchmarks.ghz.faq_index import DEFAULT_DATASET  # noqa: E402
from server.commands.eval_command import format_table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--dataset",
        type=Path,
        default=DEFAULT_DATASET,
        help="BEIR dir (default: $PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout)",
    )
    parser.add_argument("--name", default="python_faq")
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=Path.home() / ".cache" / "groundwire" / "eval-embeddings.sqlite",
    )
    parser.add_argument("--subset")
    parser.add_argument("--distractors", type=int, default=0)
    args = parser.parse_args()
    command = [
        sys.executable,
        "-m",
        "server",
        "eval",
        "--dataset",
        str(args.dataset),
        "--json",
        "--embedding-cache",
        str(args.embedding_cache),
    ]
    if args.subset:
        command += ["--subset", args.subset, "--distractors", str(args.distractors)]
    completed = subprocess.run(command, capture_output=True, text=True, check=True, env=os.environ)
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    write(report, args.name)


def write(report: dict[str, object], name: str) -> None:
    results: dict[str, dict[str, float]] = report["results"]  # type: ignore[assignment]
    table = format_table(results)
    print(table)
    date = datetime.now(UTC).isoformat(timespec="seconds")
    subset = report.get("subset")
    scope = (
        f", subset: ids starting {subset['prefix']!r} + {subset['distractors']} random others"  # type: ignore[index]
        if subset
        else ""
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}_quality.json").write_text(
        json.dumps({"date": date, **report}, indent=2) + "\n"
    )
    (RESULTS / f"{name}_quality.md").write_text(
        f"# {name} retrieval quality ({date}, {report['device']}, {report['documents']} documents, "
        f"{report['queries']} queries{scope})\n\n"
        "Produced by `benchmarks/quality/python_faq.py` (`groundwire eval`): the corpus is indexed through\n"
        "the real indexer (structure-aware chunks of at most 200 tokens, section path as a header line, one\n"
        "whole-section vector per section) and every query runs through the real pipeline; a document\n"
        "ranks by its best chunk. The baseline row is\n"
        'computed in the same run: one MiniLM vector per whole section (`title + "\\n" + text`, the model\n'
        "keeps its first 256 tokens), exact search. Deltas are against it. `section weight w` rows mix\n"
        "each chunk's cosine with its section vector's: (1 - w) chunk + w section (default w = 0.5).\n\n"
        + table
        + "\n"
    )


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--from-json":
        write(json.loads(Path(sys.argv[2]).read_text()), sys.argv[3])
    else:
        main()
