"""Corpus adaptation (`groundwire tune`) on the labelled sets: writes benchmarks/results/tune_<NAME>.md
and .json from the JSON report of `groundwire eval --tune` runs (one per set).

Produce each report with, e.g. (the bounds are the server's `[tune]` settings):

    GROUNDWIRE_TUNE__BATCH_SIZE=16 GROUNDWIRE_TUNE__EVAL_EVERY_STEPS=10 \\
    .venv/bin/groundwire eval --tune --dataset ../shared/data/python-faq --subset faq/ \\
        --distractors 300 --embedding-cache /tmp/emb.sqlite --output python.json

Run: .venv/bin/python benchmarks/quality/tune_report.py --name subsets python.json perl.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
ROWS = ("whole-section baseline", "dense", "tuned dense", "default", "tuned default")
OLD_TUNED = "tuned old default (chunks only, weighted bm25 0.25)"
"""What a tuned collection ranked by before tunes re-embedded section vectors (reports since)."""


def section(report: dict[str, object]) -> list[str]:
    """The table of one eval report: baseline, dense and default before and after tuning."""
    results = report["results"]
    tune = report["tune"]
    assert isinstance(results, dict) and isinstance(tune, dict)
    subset = report.get("subset") or {}
    base = results["whole-section baseline"]
    name = Path(str(report["dataset"])).name
    where = (
        f"subset {subset['prefix']!r} + {subset['distractors']} distractors"
        if subset
        else "whole corpus"
    )
    lines = [
        f"## {name} ({where}: {report['documents']} documents, {report['queries']} queries)",
        "",
        "| configuration | MRR@10 | R@10 | nDCG@10 | ΔMRR@10 vs baseline | ΔR@10 vs baseline |",
        "|---|---|---|---|---|---|",
    ]
    for row in (*ROWS, OLD_TUNED) if OLD_TUNED in results else ROWS:
        m = results[row]
        lines.append(
            f"| {row} | {m['mrr@10']:.3f} | {m['recall@10']:.3f} | {m['ndcg@10']:.3f} | "
            f"{m['mrr@10'] - base['mrr@10']:+.3f} | {m['recall@10'] - base['recall@10']:+.3f} |"
        )
    lines += [
        "",
        f"Tune: {tune['pairs']} pairs ({tune['train_pairs']} train, {tune['held_out_pairs']} "
        f"held out), {tune['epochs']} epoch(s), {tune['steps']} steps, stopped: "
        f"{tune['stopped_because']}; held-out top-1 {tune['held_out_before']:.3f} -> "
        f"{tune['held_out_after']:.3f}; train {tune['train_seconds']:.0f} s + re-embed "
        f"{tune['reembed_seconds']:.0f} s ({tune['chunks']} chunks) + "
        f"{tune.get('section_seconds', 0):.0f} s ({tune.get('section_vectors', 0)} section "
        f"vectors) = {tune['total_seconds']:.0f} s "
        f"on {report['device']} (load average at the end {tune['load_average']}); whole run "
        f"{report['seconds']} s.",
        "",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--name", required=True, help="results are written as tune_<name>.*")
    parser.add_argument("reports", nargs="+", type=Path, help="`groundwire eval --tune` JSON")
    args = parser.parse_args()
    reports = [json.loads(p.read_text()) for p in args.reports]
    lines = [
        f"# groundwire tune: before and after ({args.name})",
        "",
        "`groundwire eval --tune` indexes each set, tunes a copy of the collection on its own",
        "heading -> section pairs (queries and labels are never read; the FAQ sections the test",
        "questions point to are stored untitled and give no pair), re-embeds it and scores it in",
        "the same run as the whole-section baseline and the untuned rows.",
        "",
    ]
    for report in reports:
        lines += section(report)
    options = reports[0]["tune"]["options"]
    lines.append(f"Tune settings: `{json.dumps(options, sort_keys=True)}`")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"tune_{args.name}.md").write_text("\n".join(lines) + "\n")
    (RESULTS / f"tune_{args.name}.json").write_text(json.dumps(reports, indent=2) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
