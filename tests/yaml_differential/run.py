#!/usr/bin/env python3
"""Differential test of mzk's YAML reader against PyYAML, mozaiks' loader.

Generates seeded documents (generate.py), asks PyYAML (`yaml.safe_load` in the
reference's virtualenv: judge.py) and mzk (the mzk-yaml-dump binary) about
each, and compares:

- both accept  -> the values agree, types included (`yes`, `010`, `1e3`,
  dates, keys of a mapping in order, a repeated key's last value);
- both refuse  -> mzk's first error starts at PyYAML's position;
- otherwise    -> a verdict disagreement.

Documents in regressions.jsonl (each disagreement ever found, kept once
fixed) are always compared as well. Differences mzk makes on purpose are
listed in `intended` below, each with its reason.

known.txt is the ratchet while the reader is brought to PyYAML's rules: one
line per class of disagreement still open, `CEILING<TAB>CLASS`. A class
over its ceiling, or one not listed, fails the run; a class under its
ceiling is reported so the ceiling can come down (`--write-known` rewrites
the file from the run). The goal is an empty known.txt.

PyYAML's verdicts are cached under MZK_CACHE (default ~/.cache/mzk), keyed
by the documents and the judge, so a rerun costs mzk's side only.

Usage: run.py --dump target/debug/mzk-yaml-dump [--seed 38] [--count 20000]
              [--keep FILE] (write every disagreement as JSON lines to FILE)
Exit 0 on agreement, 1 on a disagreement, 2 on a harness failure, 3 when the
reference cannot be installed (PyPI unreachable and nothing cached).
Stdout is the report; progress goes to stderr.
"""
import argparse
import collections
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "conformance"))
import run as conformance  # noqa: E402  (installs and caches the reference)

import generate  # noqa: E402

REGRESSIONS = HERE / "regressions.jsonl"
KNOWN = HERE / "known.txt"


def load_known():
    known = {}
    if KNOWN.is_file():
        for line in KNOWN.read_text().split("\n"):
            if line.strip() and not line.startswith("#"):
                ceiling, _, name = line.partition("\t")
                known[name] = int(ceiling)
    return known


def intended(case, py, mz):
    """The reason for a difference mzk makes on purpose, or None."""
    # PyYAML builds a value that contains itself, or merges a mapping into
    # itself (`<<: *own`); mzk refuses the alias where it is written (MZ003).
    # PyYAML either accepts it or refuses what the recursion builds (a list
    # merged into itself); mzk's first error is then the alias.
    if mz.get("code") == "MZ003" and "recursive alias" in mz.get("message", ""):
        return "recursive alias: refused by mzk (MZ003), a value mozaiks cannot validate"
    # A merge source that is not a mapping (`<<: *scalar`): PyYAML names the
    # node the alias refers to, mzk the `<<` value where it is used.
    if ("error" in py and "error" in mz and mz.get("code") == "MZ009"
            and "for merging" in py["problem"] and "for merging" in mz["message"]):
        return "merge source not a mapping: mzk points at the `<<` value, PyYAML at the node its alias names"
    return None


def judge(python, cases):
    """PyYAML's verdicts by id, from the cache when the same documents were
    judged by the same judge before."""
    lines = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in cases)
    key = hashlib.sha256((str(python) + (HERE / "judge.py").read_text() + lines).encode()).hexdigest()[:24]
    cache = conformance.cache_dir() / "yaml-differential"
    cache.mkdir(parents=True, exist_ok=True)
    stored = cache / f"{key}.jsonl"
    if not stored.is_file():
        conformance.note(f"judging {len(cases)} documents with PyYAML ({python})")
        result = subprocess.run([str(python), str(HERE / "judge.py")], input=lines,
                                capture_output=True, text=True)
        if result.returncode != 0:
            conformance.note(f"error: judge.py failed:\n{result.stderr}")
            sys.exit(2)
        partial = stored.with_suffix(".partial")
        partial.write_text(result.stdout)
        partial.rename(stored)
    answers = [json.loads(line) for line in stored.read_text().split("\n") if line.strip()]
    version = answers.pop()["pyyaml"]
    return version, {a.pop("id"): a for a in answers}


def dump(binary, cases):
    lines = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in cases)
    result = subprocess.run([str(binary)], input=lines, capture_output=True, text=True)
    if result.returncode != 0:
        conformance.note(f"error: {binary} failed ({result.returncode}):\n{result.stderr[-3000:]}")
        sys.exit(2)
    answers = [json.loads(line) for line in result.stdout.split("\n") if line.strip()]
    return {a.pop("id"): a for a in answers}


def compare(py, mz):
    """None when they agree, else (class, detail)."""
    if "value" in py and "value" in mz:
        if py["value"] == mz["value"]:
            return None
        return ("values differ", f"PyYAML {json.dumps(py['value'])[:200]}\n      mzk    {json.dumps(mz['value'])[:200]}")
    if "error" in py and "error" in mz:
        # PyYAML names no position for some refusals (a constructor's own
        # error, `!!float abc`): any position of mzk's agrees.
        if py["error"] is None or py["error"] == mz["error"]:
            return None
        return (f"position: {py['problem']}",
                f"PyYAML at {py['error']} ({py['line']}:{py['column']}), mzk at {mz['error']} [{mz['code']}] {mz['message'][:120]}")
    if "error" in py:
        return (f"mzk accepts, PyYAML refuses: {py['problem']}", f"PyYAML at {py['error']} ({py['line']}:{py['column']})")
    return (f"mzk refuses [{mz['code']}], PyYAML accepts", f"mzk at {mz['error']}: {mz['message'][:160]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path, required=True, help="the mzk-yaml-dump binary")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--keep", type=Path, help="write every disagreement here, as JSON lines")
    parser.add_argument("--examples", type=int, default=3, help="examples printed per class")
    parser.add_argument("--write-known", action="store_true",
                        help="rewrite known.txt with this run's classes and counts as the ceilings")
    args = parser.parse_args()

    python, _ = conformance.ensure_reference(conformance.cache_dir())
    cases = list(generate.documents(args.seed, args.count))
    if REGRESSIONS.is_file():
        for line in REGRESSIONS.read_text().split("\n"):
            if line.strip():
                kept = json.loads(line)
                cases.append((kept["id"], kept["text"]))
    version, pyyaml = judge(python, cases)
    mzk = dump(args.dump, cases)

    classes = collections.defaultdict(list)
    allowed = collections.Counter()
    accepted = refused = 0
    for case_id, text in cases:
        py, mz = pyyaml[case_id], mzk[case_id]
        if "value" in py:
            accepted += 1
        else:
            refused += 1
        difference = compare(py, mz)
        if difference is None:
            continue
        reason = intended(text, py, mz)
        if reason:
            allowed[reason] += 1
            continue
        classes[difference[0]].append((case_id, text, difference[1]))

    disagreements = sum(len(v) for v in classes.values())
    known = load_known()
    print(f"yaml differential: {len(cases)} documents (seed {args.seed}, {args.count} generated, "
          f"{len(cases) - args.count} kept regressions), PyYAML {version}: accepts {accepted}, refuses {refused}")
    for reason, n in sorted(allowed.items()):
        print(f"  intended ({n}): {reason}")
    over = 0
    for name, found in sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ceiling = known.get(name, 0)
        if len(found) > ceiling:
            over += len(found) - ceiling
            status = "NEW" if name not in known else f"OVER the known {ceiling}"
        else:
            status = f"known, ceiling {ceiling}"
        print(f"\n{len(found):5}  {name}  [{status}]")
        for case_id, text, detail in found[:args.examples]:
            print(f"    {case_id}: {text!r}"[:400])
            print(f"      {detail}")
    lower = sorted(name for name, ceiling in known.items() if len(classes.get(name, [])) < ceiling)
    if lower:
        print(f"\nnote: {len(lower)} known classes are under their ceiling (run with --write-known to lower them)")
    if args.keep:
        with args.keep.open("w") as out:
            for found in classes.values():
                for case_id, text, _ in found:
                    out.write(json.dumps({"id": f"r-{case_id}", "text": text}) + "\n")
    if args.write_known:
        lines = [f"{len(found)}\t{name}" for name, found in sorted(classes.items())]
        KNOWN.write_text("# Open classes of disagreement with PyYAML: CEILING<TAB>CLASS (see run.py).\n"
                         + "".join(line + "\n" for line in lines))
    intended_total = sum(allowed.values())
    print(f"\nyaml differential: {len(cases)} documents, {len(cases) - disagreements - intended_total} agree, "
          f"{intended_total} differ as intended, {disagreements} differ in {len(classes)} open classes; "
          f"{over} beyond the ceilings")
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException as e:  # a harness failure, told apart from a disagreement
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
