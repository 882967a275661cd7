#!/usr/bin/env python3
"""Runtime conformance: mzk's engine against the real mozaiks 0.2.0 runtime.

Every scenario of tests/fixtures/runtime, of bundles/*/scenarios and of the
real bundles (tests/conformance/engine_scenarios/<Bundle>/*.yaml, run on a
copy of the bundle from the mozaiks wheel) runs through both engines with
`mzk test --engine both` — mozaiks offline in the reference virtualenv, its
model served by mzk, MongoDB in memory. Each difference between the two runs
must be listed, with its reason, in the table of intended differences in
docs/engines.md; any other difference fails the stage, and so does a row of
that table that no longer matches anything (the table stays true).

    python3 tests/conformance/engines.py --mzk target/debug/mzk-e2e
"""
import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import run as reference

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TABLE = REPO / "docs" / "engines.md"
REAL_SCENARIOS = HERE / "engine_scenarios"
# mozaiks gives a channel that stops making progress 300 s; the stage runs
# with a shorter deadline (the driver's documented knob) so a scenario that
# reaches it ends in seconds.
IDLE_TIMEOUT = "5"


def intended_differences():
    """(scenario glob, aspect, reason) rows between the table's markers."""
    text = TABLE.read_text(encoding="utf-8")
    start = text.index("<!-- intended-differences:start -->")
    end = text.index("<!-- intended-differences:end -->")
    rows = []
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        rows.append((cells[0].strip("`"), cells[1].strip("`"), cells[2]))
    return rows


def real_bundle_copies(corpus, work):
    """The real bundles that have engine scenarios, copied with the shared
    folders their tools import, and their scenarios put beside them."""
    root = work / "workflows"
    root.mkdir(parents=True)
    for shared in ("_shared", "__init__.py"):
        source = corpus / shared
        if source.is_dir():
            shutil.copytree(source, root / shared)
        elif source.is_file():
            shutil.copy(source, root / shared)
    folders = []
    for scenarios in sorted(p for p in REAL_SCENARIOS.iterdir() if p.is_dir()):
        target = root / scenarios.name
        shutil.copytree(corpus / scenarios.name, target)
        shutil.copytree(scenarios, target / "scenarios", dirs_exist_ok=True)
        folders.append(target)
    return folders


def scenario_files(bundle):
    """The scenarios `mzk test` runs (runtime/src/suite.rs `scenario_files`)."""
    folder = bundle / "scenarios"
    if not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml", ".json")]


def run_group(mzk, python, paths, out):
    env = dict(os.environ, MZK_MOZAIKS_IDLE_TIMEOUT=IDLE_TIMEOUT)
    started = time.monotonic()
    result = subprocess.run(
        [str(mzk), "test", "--engine", "both", "--python", str(python),
         "--diff-json", str(out), *map(str, paths)],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=900)
    return result, time.monotonic() - started


def relative(scenario, work):
    path = Path(scenario)
    if not path.is_absolute():
        path = (REPO / path).resolve()
    for base in (work / "workflows", REPO):
        try:
            rel = path.relative_to(base)
        except ValueError:
            continue
        return ("real/" if base != REPO else "") + rel.as_posix()
    return path.as_posix()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mzk", type=Path, required=True, help="the mzk binary")
    args = parser.parse_args()
    mzk = args.mzk.resolve()
    python, corpus = reference.ensure_reference(reference.cache_dir())
    table = intended_differences()
    # Resolved: mzk prints canonical paths (a symlinked TMPDIR would not match).
    work = Path(tempfile.mkdtemp(prefix="mzk-engines-")).resolve()
    try:
        real = real_bundle_copies(corpus, work)
        fixtures = sorted(p for p in (REPO / "tests/fixtures/runtime").iterdir()
                          if (p / "orchestrator.yaml").is_file())
        examples = sorted(p for p in (REPO / "bundles").iterdir()
                          if (p / "orchestrator.yaml").is_file())
        # Two groups of about the same length, one per core.
        everything = fixtures + examples + real
        groups = [everything[0::2], everything[1::2]]
        with ThreadPoolExecutor(max_workers=2) as pool:
            outcomes = list(pool.map(
                lambda i: run_group(mzk, python, groups[i], work / f"diff{i}.json"),
                range(len(groups))))
        records = []
        for i, (result, took) in enumerate(outcomes):
            # 1: scenarios failed or the engines differed — judged below.
            if result.returncode not in (0, 1) or not (work / f"diff{i}.json").is_file():
                print(result.stdout)
                print(result.stderr, file=sys.stderr)
                print(f"error: mzk test --engine both exited {result.returncode}", file=sys.stderr)
                return 2
            records += json.loads((work / f"diff{i}.json").read_text())["scenarios"]
            print(f"group {i + 1}: {len(groups[i])} bundles in {took:.1f} s")
        # Every scenario file must come back with both traces: a file that
        # does not load, or a bundle mzk refuses, writes no record. A bundle
        # with errors is refused by design: it needs a `refused` row.
        refused = {relative(line.split(": has errors")[0].strip(), work)
                   for result, _ in outcomes for line in result.stdout.splitlines()
                   if line.endswith(": has errors, not run (`mzk check` explains them)")}
        expected = sum(len(scenario_files(b)) for b in everything
                       if relative(str(b), work) not in refused)
        records += [{"scenario": name, "refused": True} for name in sorted(refused)]
        if len(records) - len(refused) != expected:
            print("\n".join(result.stdout for result, _ in outcomes))
            print(f"error: {expected} scenario files, but {len(records)} ran on both engines "
                  "(the FAIL lines above say why)", file=sys.stderr)
            return 1
        return judge(records, table, work, real)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def judge(records, table, work, real):
    used = set()
    unexpected = []
    intended = 0
    mzk_missed = []
    for record in records:
        name = relative(record["scenario"], work)
        if record.get("refused"):
            differences = [{"aspect": "refused", "mzk": "refused (the bundle has errors)",
                            "mozaiks": "not run"}]
        else:
            differences = record["differences"]
            divergence = record["engines"]["mzk"]["divergence"]
            if divergence:
                mzk_missed.append(f"{name}: {divergence}")
        for difference in differences:
            row = next((i for i, (glob, aspect, _) in enumerate(table)
                        if fnmatch.fnmatchcase(name, glob) and aspect == difference["aspect"]), None)
            if row is None:
                unexpected.append((name, difference))
            else:
                used.add(row)
                intended += 1
    real_count = sum(1 for r in records
                     if not r.get("refused") and relative(r["scenario"], work).startswith("real/"))
    ran = sum(1 for r in records if not r.get("refused"))
    print(f"{ran} scenarios ({real_count} on {len(real)} real bundles) through both engines: "
          f"{intended} intended differences, {len(unexpected)} unexpected")
    for name, d in unexpected:
        where = f" from #{d['at']}" if d.get("at") else ""
        print(f"  UNEXPECTED {name}: {d['aspect']}{where}: mzk {d['mzk']} | mozaiks {d['mozaiks']}")
    for line in mzk_missed:
        print(f"  FAIL (mzk's engine misses its scenario's outcome) {line}")
    # A row about timing in mozaiks may match nothing in a given run.
    stale = [table[i] for i in range(len(table))
             if i not in used and not table[i][2].startswith("**Timing.**")]
    for glob, aspect, _ in stale:
        print(f"  STALE row of {TABLE.relative_to(REPO)}: `{glob}` `{aspect}` matches no difference any more")
    return 1 if unexpected or mzk_missed or stale else 0


if __name__ == "__main__":
    sys.exit(main())
