"""One table of every `groundwire eval` configuration on the labelled sets, side by side.

Run: .venv/bin/python benchmarks/quality/both_sets_table.py [PERL_JSON PYTHON_JSON] \
        [--set NAME=JSON ...] [--note TEXT ...] [--name NAME] [--title TEXT]
(each a report written by `groundwire eval --json --output FILE`; `--set r-faq=FILE` adds a
column group after perl-faq and python-faq, or makes one on its own without them). Prints the
table and writes
benchmarks/results/<NAME>.md (NAME: section_vectors): MRR@10 and Recall@10 per set with deltas
against each set's whole-section baseline row, computed in the same run as the configuration.
Each `--note` is a paragraph printed before the table (where and when the runs were made).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
BASELINE = "whole-section baseline"


def scope(report: dict[str, object]) -> str:
    subset = report.get("subset")
    where = (
        f"ids starting {subset['prefix']!r} + {subset['distractors']} others"  # type: ignore[index]
        if subset
        else "whole corpus"
    )
    return f"{report['documents']} documents, {report['queries']} queries, {where}"


def table(sets: dict[str, dict[str, object]]) -> str:
    header = "| configuration | " + " | ".join(
        f"{name} MRR@10 | Δ | {name} R@10 | Δ" for name in sets
    )
    lines = [header + " |", "|---|" + "---|---|---|---|" * len(sets)]
    labels = list(dict.fromkeys(label for r in sets.values() for label in r["results"]))  # type: ignore[attr-defined]
    for label in labels:
        cells = []
        for report in sets.values():
            results: dict[str, dict[str, float]] = report["results"]  # type: ignore[assignment]
            row, base = results.get(label), results[BASELINE]
            if row is None:
                cells.append("- | - | - | -")
                continue
            cells.append(
                f"{row['mrr@10']:.3f} | {row['mrr@10'] - base['mrr@10']:+.3f} | "
                f"{row['recall@10']:.3f} | {row['recall@10'] - base['recall@10']:+.3f}"
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("perl", type=Path, nargs="?")
    parser.add_argument("python", type=Path, nargs="?")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="one more labelled set's report, as its column name and file",
    )
    parser.add_argument("--note", action="append", default=[], help="a paragraph before the table")
    parser.add_argument("--name", default="section_vectors")
    parser.add_argument("--title", help="what the table compares (default: the labelled sets)")
    args = parser.parse_args()
    if (args.perl is None) != (args.python is None):
        parser.error("give both PERL_JSON and PYTHON_JSON, or neither")
    sets = {}
    if args.perl is not None:
        sets["perl-faq"] = json.loads(args.perl.read_text())
        sets["python-faq"] = json.loads(args.python.read_text())
    for spec in args.set:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            parser.error(f"--set {spec!r}: expected NAME=JSON, e.g. r-faq=eval_r_faq_full.json")
        sets[name] = json.loads(Path(path).read_text())
    text = table(sets)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    scopes = "\n".join(f"- {name}: {scope(report)}" for name, report in sets.items())
    notes = "".join(f"{note}\n\n" for note in args.note)
    if not sets:
        parser.error("no report: give PERL_JSON PYTHON_JSON or --set NAME=JSON")
    title = args.title or ("both development sets" if len(sets) == 2 else "every labelled set")
    (RESULTS / f"{args.name}.md").write_text(
        f"# Every retrieval configuration on {title} (`groundwire eval`)\n\n"
        "Produced by `benchmarks/quality/both_sets_table.py` from `groundwire eval --json` "
        "reports, one per set; each set's baseline (one MiniLM vector per whole section, exact "
        "search) is computed in the same run as its configurations. Deltas are against it.\n\n"
        f"{scopes}\n\n{notes}{text}\n"
    )


if __name__ == "__main__":
    main()
