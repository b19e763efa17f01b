"""Retrieval quality on python-faq (BEIR layout) for every configuration `groundwire eval` compares.

Run: .venv/bin/python benchmarks/quality/python_faq.py [--dataset DIR] [--embedding-cache FILE]
Prints the table and writes benchmarks/results/python_faq_quality.{json,md}. The first run embeds
the 5,093 sections (20-40 minutes on 2 CPU cores); --embedding-cache makes later runs take minutes.
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
DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "python-faq"
REFERENCE = {  # ../shared/data/python-faq/README.md: exact search over whole sections
    "dense (reference)": {"mrr@10": 0.638, "recall@10": 0.866, "ndcg@10": 0.693},
    "lexical (reference)": {"mrr@10": 0.233, "recall@10": 0.419, "ndcg@10": 0.277},
    "hybrid RRF k=60 (reference)": {"mrr@10": 0.486, "recall@10": 0.733, "ndcg@10": 0.545},
}
METRICS = ("mrr@10", "recall@10", "ndcg@10")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=Path.home() / ".cache" / "groundwire" / "eval-embeddings.sqlite",
    )
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
    completed = subprocess.run(command, capture_output=True, text=True, check=True, env=os.environ)
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    write(report)


def write(report: dict[str, object]) -> None:
    results: dict[str, dict[str, float]] = report["results"]  # type: ignore[assignment]
    best = {m: max(results[name][m] for name in ("dense", "lexical")) for m in METRICS}
    lines = [
        "| configuration | MRR@10 | Recall@10 | nDCG@10 | ΔMRR vs best single | ΔR@10 vs best single |",
        "|---|---|---|---|---|---|",
    ]
    for name, metrics in results.items():
        lines.append(
            f"| {name} | "
            + " | ".join(f"{metrics[m]:.3f}" for m in METRICS)
            + f" | {metrics['mrr@10'] - best['mrr@10']:+.3f} | {metrics['recall@10'] - best['recall@10']:+.3f} |"
        )
    for name, metrics in REFERENCE.items():
        lines.append(f"| {name} | " + " | ".join(f"{metrics[m]:.3f}" for m in METRICS) + " | | |")
    table = "\n".join(lines)
    print(table)
    date = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "python_faq_quality.json").write_text(
        json.dumps({"date": date, **report}, indent=2) + "\n"
    )
    (RESULTS / "python_faq_quality.md").write_text(
        f"# python-faq retrieval quality ({date}, {report['device']}, {report['documents']} documents, "
        f"{report['queries']} queries)\n\n"
        "Produced by `benchmarks/quality/python_faq.py` (`groundwire eval`): the corpus is indexed through\n"
        "the real indexer (structure-aware chunks of at most 200 tokens, section path as a header line) and\n"
        "every query runs through the real pipeline; a document ranks by its best chunk. Reference rows\n"
        "are the dataset README's figures (one vector per whole section, truncated at 256 tokens).\n\n"
        + table
        + "\n"
    )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--from-json":
        write(json.loads(Path(sys.argv[2]).read_text()))
    else:
        main()
