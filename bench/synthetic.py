#!/usr/bin/env python3
"""Whole `mzk check` on the synthetic bundles of 500 and 5,000 agents (about
ten rules each; `mzk-graph-bench --write`), as a user runs it: process start,
reading the files, every default check, the report. Prints the median time
over --runs, the peak memory, and the growth from 500 to 5,000 agents, each
with its goal (issue 19: <= 250 ms and <= 100 MiB at 5,000 agents, growth
<= 12x). Run by scripts/bench; it builds nothing itself.
"""

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# bench/run.py's timers, loaded under a name of their own (it imports the
# conformance suite's run.py as `run`).
_spec = importlib.util.spec_from_file_location("bench_run", Path(__file__).resolve().parent / "run.py")
_bench_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bench_run)
REPO, rss_of, timed = _bench_run.REPO, _bench_run.rss_of, _bench_run.timed


def yaml_layer(root, bundle, runs):
    """The YAML layer alone on the bundle's files: mzk's reader, saphyr-parser's
    events (mzk-bench) and PyYAML's safe_load, in this run."""
    def phase(name):
        out = subprocess.run([str(REPO / "target" / "release" / "mzk-bench"), str(root),
                              "--iterations", str(runs), "--phase", name],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["median_ms"]

    python, _ = _bench_run.conformance.ensure_reference(_bench_run.conformance.cache_dir())
    pyyaml = _bench_run.pyyaml_load(python, [bundle], max(runs // 2, 3))
    syntax, events = phase("syntax"), phase("parse_only")
    print(f"YAML layer on the 5,000-agent bundle: mzk {syntax:.1f} ms, saphyr-parser's events alone "
          f"{events:.1f} ms, PyYAML safe_load {pyyaml['median_ms']:.0f} ms: mzk {pyyaml['median_ms'] / syntax:.0f}x "
          f"PyYAML, {syntax / events:.2f}x saphyr's events")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    release = REPO / "target" / "release"
    mzk, writer = release / "mzk", release / "mzk-graph-bench"
    medians = {}
    with tempfile.TemporaryDirectory(prefix="mzk-synthetic-") as tmp:
        for agents in (500, 5_000):
            root = Path(tmp) / str(agents)
            _, written, _ = timed([str(writer), "--write", str(root), str(agents)])
            if written.returncode != 0:
                sys.exit(f"writing the {agents}-agent bundle failed: {written.stderr.strip()}")
            bundle = root / "Synthetic"
            size = sum(f.stat().st_size for f in bundle.iterdir())
            cmd = [str(mzk), "check", str(bundle)]
            first = timed(cmd)[1]
            # Warnings exit 0; an error in the generated bundle would be a bench bug.
            if first.returncode != 0:
                sys.exit(f"mzk check on the {agents}-agent bundle exited {first.returncode}:\n{first.stdout[-2000:]}")
            times = [timed(cmd)[0] for _ in range(args.runs)]
            medians[agents] = statistics.median(times)
            rss = rss_of(cmd)
            print(f"{agents:>5} agents ({size / 1e6:.1f} MB of YAML): mzk check (whole process) median "
                  f"{medians[agents]:.1f} ms over {args.runs} runs"
                  + (f", max RSS {rss / 1024:.1f} MiB" if rss else ""))
            if agents == 5_000:
                yaml_layer(root, bundle, args.runs)
    print(f"goals at 5,000 agents: <= 250 ms, <= 100 MiB; growth 500 -> 5,000 agents: "
          f"x{medians[5_000] / medians[500]:.1f} (goal: <= 12x)")


if __name__ == "__main__":
    main()
