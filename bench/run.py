#!/usr/bin/env python3
"""Benchmark: `mzk check` on the 15 real bundles of mozaiks 0.2.0 against
mozaiks' own validator on the same bundles, in the same run.

Prints, for the same 1.3 MB of YAML:
  - mzk check, whole process (release build), median of --runs;
  - the reference validator, whole process (python start, import, validate), median;
  - the ratio between the two;
  - in-process: the YAML parser alone (saphyr events), mzk's syntax layer and
    mzk's whole analysis, and the analysis / parser-alone ratio.
Peak memory (max RSS) of both processes is printed too.

Usage: python3 bench/run.py [--runs 20] [--reference-runs 3]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "conformance"))
import run as conformance  # noqa: E402  (reuses the cached reference install)


def timed(cmd, env=None, cwd=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, result, max(before.ru_maxrss, after.ru_maxrss)


def rss_of(cmd, env=None, cwd=None):
    """Peak RSS (KiB) of one run, measured by GNU time when present, else None."""
    if not Path("/usr/bin/time").exists():
        return None
    result = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        return int(result.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def pyyaml_load(python, folders, runs):
    """PyYAML's safe_load over the files mzk-bench reads (bench/yaml_pyyaml.py)."""
    result = subprocess.run([str(python), str(REPO / "bench" / "yaml_pyyaml.py"), *map(str, folders),
                             "--runs", str(runs)], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--reference-runs", type=int, default=3)
    args = parser.parse_args()

    build = subprocess.run(["cargo", "build", "--release", "-q", "-p", "mzk-server", "-p", "mzk-bench"], cwd=REPO)
    if build.returncode != 0:
        sys.exit(2)
    mzk = REPO / "target" / "release" / "mzk"
    bench = REPO / "target" / "release" / "mzk-bench"
    python, corpus = conformance.ensure_reference(conformance.cache_dir())
    bundles = conformance.real_bundles(corpus)
    yaml_bytes = sum(p.stat().st_size for b in bundles for p in b.rglob("*.yaml"))

    mzk_cmd = [str(mzk), "check", str(corpus), "--output-format", "json"]
    first = subprocess.run(mzk_cmd, capture_output=True, text=True)
    report = json.loads(first.stdout)
    assert report["summary"]["bundles"] == 15, report["summary"]
    mzk_times = [timed(mzk_cmd)[0] for _ in range(args.runs)]
    mzk_rss = rss_of(mzk_cmd)

    env = dict(os.environ, MOZAIKS_WORKFLOWS_PATH=str(corpus))
    ref_cmd = [str(python), str(REPO / "tests" / "conformance" / "reference.py"), *map(str, bundles)]
    ref_times = []
    for _ in range(args.reference_runs):
        elapsed, result, _ = timed(ref_cmd, env=env)
        verdicts = [json.loads(line) for line in result.stdout.splitlines()]
        assert len(verdicts) == 15 and all(v["valid"] for v in verdicts), result.stderr[-2000:]
        ref_times.append(elapsed)
    ref_rss = rss_of(ref_cmd, env=env)
    validate_only = sum(v["ms"] for v in verdicts)

    inproc = json.loads(subprocess.run([str(bench), str(corpus), "--iterations", str(max(args.runs, 10))],
                                       capture_output=True, text=True, check=True).stdout)

    mzk_ms = statistics.median(mzk_times)
    ref_ms = statistics.median(ref_times)
    parse_ms = inproc["parse_only"]["median_ms"]
    analysis_ms = inproc["analysis"]["median_ms"]
    parallel_ms = inproc["analysis_parallel"]["median_ms"]
    print(f"corpus: {len(bundles)} bundles, {inproc['yaml_files']} YAML files, {yaml_bytes / 1e6:.2f} MB")
    print(f"mzk check (whole process, release): median {mzk_ms:.1f} ms, min {min(mzk_times):.1f} ms over {args.runs} runs"
          + (f", max RSS {mzk_rss / 1024:.1f} MiB" if mzk_rss else ""))
    print(f"mozaiks 0.2.0 validator (whole process): median {ref_ms:.0f} ms over {args.reference_runs} runs"
          f" (validate_workflow alone: {validate_only:.0f} ms)" + (f", max RSS {ref_rss / 1024:.1f} MiB" if ref_rss else ""))
    print(f"speed-up, whole process: {ref_ms / mzk_ms:.0f}x (goal: >= 100x, i.e. mzk <= {ref_ms / 100:.0f} ms)")
    print(f"in-process: YAML parser alone {parse_ms:.2f} ms, mzk syntax layer {inproc['syntax']['median_ms']:.2f} ms, "
          f"mzk whole analysis {analysis_ms:.2f} ms on one thread, {parallel_ms:.2f} ms on {inproc['threads']} "
          f"(bundles in parallel, as mzk check runs)")
    pyyaml = pyyaml_load(python, bundles, max(args.runs, 10))
    syntax_ms = inproc["syntax"]["median_ms"]
    print(f"YAML layer on the corpus: mzk {syntax_ms:.2f} ms (tree, values, errors), saphyr-parser's events alone "
          f"{parse_ms:.2f} ms, PyYAML safe_load {pyyaml['median_ms']:.0f} ms (pure Python, as mozaiks loads): "
          f"mzk {pyyaml['median_ms'] / syntax_ms:.0f}x PyYAML, {syntax_ms / parse_ms:.2f}x saphyr's events")
    print(f"analysis / parser alone: {parallel_ms / parse_ms:.2f}x as mzk check runs it (goal: <= 3x), "
          f"{analysis_ms / parse_ms:.2f}x on one thread; whole process / parser alone: {mzk_ms / parse_ms:.2f}x")
    print(f"prompt checks (MZ8xx, included above): {inproc['prompt_checks']['median_ms']:.2f} ms for the 15 bundles; "
          f"composing and tokenizing every prompt and part ({inproc['prompt_bytes'] / 1e3:.0f} KB of prompt text, "
          f"twice over): {inproc['prompt_tokens']['median_ms']:.1f} ms")
    largest = inproc["largest_prompts"]
    print(f"tokenizing the prompts of {largest['bundle']} ({largest['bytes'] / 1e3:.0f} KB, {largest['tokens']:,} tokens), "
          f"tokenizer loaded: {largest['tokenize']['median_ms']:.1f} ms (goal: well under 100 ms)")
    app = corpus / "AppGenerator"
    context_cmd = [str(mzk), "context", str(app), "--output-format", "json"]
    context = json.loads(subprocess.run(context_cmd, capture_output=True, text=True, check=True).stdout)
    context_times = [timed(context_cmd)[0] for _ in range(args.runs)]
    print(f"mzk context AppGenerator (whole process, tokenizer load included): median {statistics.median(context_times):.1f} ms "
          f"over {args.runs} runs; {len(context['agents'])} agents, {context['total']['chars']:,} chars, "
          f"{context['total']['tokens']:,} tokens")


if __name__ == "__main__":
    main()
