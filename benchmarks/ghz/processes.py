"""ghz against `server.processes` 1 and 2 (or any list), interleaved: what several processes give.

Run from the repository root:
    python -m benchmarks.ghz.processes [--quick] [--processes 1,2] [--rounds 2] [--duration 5]

`benchmarks/ghz/runtimes.py` with one variant per process count (`pN` sets
GROUNDWIRE_SERVER__PROCESSES=N; `--also LABEL:KEY=V+KEY=V` adds others): the same cached
python-faq index, caches off, Retrieve default and dense at 8 and 32 concurrent clients over
`--connections` connections (4: the kernel spreads connections, not calls, over the processes;
over one, the process it lands on hands calls to the others, server/read_balancing.py), every
cell's runs interleaved.
Server cores busy sums the primary and its reader processes (its process tree). Writes
results/ghz_processes{,-quick}.{md,json}.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.ghz import runtimes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--processes", default="1,2")
    parser.add_argument("--also", default="", help="more variants, as runtimes.py --variants")
    ours, rest = parser.parse_known_args()
    variants = [f"p{n}:GROUNDWIRE_SERVER__PROCESSES={n}" for n in ours.processes.split(",")]
    variants += [v for v in ours.also.split(",") if v]
    sys.argv = [
        sys.argv[0],
        "--variants",
        ",".join(variants),
        "--name",
        "ghz_processes",
        "--concurrency",
        "8,32",
        "--connections",
        "4",
        *rest,
    ]
    runtimes.main(runtimes.parse_args())


if __name__ == "__main__":
    main()
