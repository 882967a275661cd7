#!/usr/bin/env python3
"""Two `mzk` binaries side by side in one run: `mzk check` of a folder of
bundles (and of any more folders given), alternating old and new so that
the machine's drift falls on both, medians compared. For stating what a
change does to the check figures before the full `scripts/bench`:

    python3 bench/compare.py OLD_MZK NEW_MZK FOLDER [FOLDER ...] [--runs 21]
"""

import argparse
import statistics
import subprocess
import time
from pathlib import Path


def once(binary, folder):
    start = time.perf_counter()
    subprocess.run([binary, "check", "."], cwd=folder,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    for folder in args.folders:
        old, new = [], []
        for _ in range(args.runs):
            old.append(once(args.old, folder))
            new.append(once(args.new, folder))
        o, n = statistics.median(old), statistics.median(new)
        print(f"{folder}: old median {o:.1f} ms, new median {n:.1f} ms, "
              f"new/old {n / o:.3f} (n={args.runs}, interleaved)")


if __name__ == "__main__":
    main()
