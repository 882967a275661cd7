#!/usr/bin/env python3
"""Conformance suite: mzk against mozaiks 0.2.0's own validator.

1. Installs mozaiks==0.2.0 from PyPI into a cached virtualenv and unpacks the
   15 real bundles its wheel ships (factory_app/workflows, with _shared/).
2. Checks that mzk reports no error on the real bundles and the examples.
3. Generates mutants (mutate.py): the mistake catalogue applied to the
   SupportDesk example, and seeded random single edits of every base bundle.
4. Asks the reference and mzk about each mutant and compares:
     - reference rejects  -> mzk must report at least one error;
     - reference accepts  -> mzk must report no error of the MZ0xx/MZ1xx families
       (the checks that mirror the reference's load-time contract).
   Prints the agreement table. Disagreements must be listed, with a reason, in
   allowlist.txt; any other disagreement fails the suite.

Stdlib only. Exit 0 on agreement (or a clear SKIP when PyPI is unreachable and
nothing is cached), 1 on disagreement, 2 on a harness failure.
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VERSION = "0.2.0"
NETWORK_MARKERS = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Could not fetch URL",
    "ConnectionError",
    "Network is unreachable",
    "No matching distribution found",
    "ReadTimeoutError",
)


def log(message):
    print(message, flush=True)


def cache_dir():
    root = os.environ.get("MZK_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mzk")
    return Path(root) / f"conformance-{VERSION}"


def run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


def pip_failed(what, result):
    output = (result.stdout or "") + (result.stderr or "")
    if any(marker in output for marker in NETWORK_MARKERS):
        log(f"SKIP: the PyPI registry is unreachable, so mozaiks=={VERSION} could not be {what}; "
            "the conformance suite needs it once (it is cached afterwards).")
        log(output.strip().splitlines()[-1] if output.strip() else "")
        sys.exit(0)
    log(f"error: pip could not get mozaiks=={VERSION} ({what}):\n{output}")
    sys.exit(2)


def ensure_reference(cache):
    """Returns (python of the reference venv, folder of the real bundles)."""
    venv = cache / "venv"
    python = venv / "bin" / "python"
    ok = python.exists() and run([str(python), "-c", "import mozaiksai, yaml"]).returncode == 0
    if not ok:
        log(f"installing mozaiks=={VERSION} from PyPI into {venv} (once)")
        shutil.rmtree(venv, ignore_errors=True)
        result = run([sys.executable, "-m", "venv", str(venv)])
        if result.returncode != 0:
            log(f"error: cannot create a virtualenv: {result.stderr}")
            sys.exit(2)
        result = run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                      "--timeout", "30", f"mozaiks=={VERSION}"])
        if result.returncode != 0:
            pip_failed("installed", result)
    corpus = cache / "corpus" / "workflows"
    if not corpus.is_dir():
        log(f"unpacking the bundles shipped in the mozaiks=={VERSION} wheel")
        with tempfile.TemporaryDirectory() as tmp:
            result = run([str(python), "-m", "pip", "download", "-q", "--disable-pip-version-check",
                          "--no-deps", "--timeout", "30", f"mozaiks=={VERSION}", "-d", tmp])
            if result.returncode != 0:
                pip_failed("downloaded", result)
            wheel = next(Path(tmp).glob("mozaiks-*.whl"))
            staging = cache / "corpus.partial"
            shutil.rmtree(staging, ignore_errors=True)
            with zipfile.ZipFile(wheel) as archive:
                for name in archive.namelist():
                    if name.startswith("factory_app/workflows/"):
                        archive.extract(name, staging)
            shutil.rmtree(cache / "corpus", ignore_errors=True)
            (cache / "corpus").mkdir(parents=True)
            (staging / "factory_app" / "workflows").rename(corpus)
            shutil.rmtree(staging, ignore_errors=True)
    return python, corpus


def real_bundles(corpus):
    return sorted(p for p in corpus.iterdir() if (p / "orchestrator.yaml").is_file())


def reference_verdicts(python, root, folders):
    env = dict(os.environ, MOZAIKS_WORKFLOWS_PATH=str(root))
    result = run([str(python), str(HERE / "reference.py"), *[str(root / f) for f in folders]], env=env)
    if result.returncode != 0:
        log(f"error: the reference validator failed:\n{result.stderr}")
        sys.exit(2)
    verdicts = {}
    for line in result.stdout.splitlines():
        record = json.loads(line)
        verdicts[record["bundle"]] = record
    return verdicts


def mzk_diagnostics(mzk, root):
    """{bundle folder name: [diagnostic]} for every bundle under root."""
    result = run([str(mzk), "check", ".", "--output-format", "json"], cwd=root)
    if result.returncode not in (0, 1):
        log(f"error: mzk check failed ({result.returncode}):\n{result.stderr}")
        sys.exit(2)
    report = json.loads(result.stdout)
    grouped = collections.defaultdict(list)
    for diagnostic in report["diagnostics"]:
        grouped[diagnostic["path"].split("/")[0]].append(diagnostic)
    return grouped


def is_error(d):
    return d["severity"] == "error"


def is_contract_error(d):
    return is_error(d) and (d["code"].startswith("MZ0") or d["code"].startswith("MZ1"))


def check_fixes(mzk, python, work, mutants, verdicts, found):
    """Applies mzk's safe fixes to a copy of the mutants that offer one and
    compares the reference's verdicts before and after; returns the number
    of failures (a verdict made worse, a second run that still fixes)."""
    def offers_safe_fix(m):
        return any(f["applicability"] == "safe"
                   for d in found.get(m["folder"], []) for f in d.get("fixes", []))
    fixable = [m for m in mutants if offers_safe_fix(m)]
    if not fixable:
        log("\nfixes: no mutant offers a safe fix")
        return 0
    copy = Path(tempfile.mkdtemp(prefix="mzk-conformance-fix-"))
    try:
        if (work / "_shared").is_dir():
            shutil.copytree(work / "_shared", copy / "_shared")
        for m in fixable:
            shutil.copytree(work / m["folder"], copy / m["folder"])
        first = run([str(mzk), "check", "--fix", "--output-format", "concise", "."], cwd=copy)
        second = run([str(mzk), "check", "--fix", "--output-format", "concise", "."], cwd=copy)
        after = reference_verdicts(python, copy, [m["folder"] for m in fixable])
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    worse = [m for m in fixable if verdicts[m["folder"]]["valid"] and not after[m["folder"]]["valid"]]
    repaired = [m for m in fixable if not verdicts[m["folder"]]["valid"] and after[m["folder"]]["valid"]]
    idempotent = "fixed 0 problems" in second.stderr
    log(f"\nfixes: `mzk check --fix` on the {len(fixable)} mutants with a safe fix: "
        f"{first.stderr.strip().splitlines()[0] if first.stderr.strip() else '(nothing said)'}; "
        f"reference verdict repaired on {len(repaired)}, made worse on {len(worse)}; "
        f"second run: {second.stderr.strip().splitlines()[0] if second.stderr.strip() else '(nothing said)'}")
    for m in worse:
        log(f"  WORSE after --fix: {m['id']} {m['folder']} [{m['operator']}] {m['file']} {m['detail']}: "
            f"{after[m['folder']]['errors'][0][:300]}")
    if not idempotent:
        log("  NOT IDEMPOTENT: the second `mzk check --fix` still fixed something")
    return len(worse) + (0 if idempotent else 1)


def load_allowlist():
    allowed = {}
    path = HERE / "allowlist.txt"
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        mid, _, reason = line.partition(" ")
        if not reason.strip():
            log(f"error: allowlist entry `{mid}` has no reason")
            sys.exit(2)
        allowed[mid] = reason.strip()
    return allowed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mzk", type=Path, help="the mzk binary")
    parser.add_argument("--print-corpus", action="store_true",
                        help="install the reference if needed, print the folder of its real bundles, exit")
    parser.add_argument("--count", type=int, default=320, help="random mutants (default 320)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--keep", type=Path, help="write mutants here and keep them")
    args = parser.parse_args()
    if args.print_corpus:
        print(ensure_reference(cache_dir())[1])
        return
    if args.mzk is None:
        parser.error("--mzk is required")
    mzk = args.mzk.resolve()

    python, corpus = ensure_reference(cache_dir())
    bases = real_bundles(corpus)
    examples = sorted(p for p in (REPO / "bundles").iterdir() if (p / "orchestrator.yaml").is_file())
    failures = 0

    # 1. The real bundles and the examples: valid for the reference, no error from mzk.
    for root, folders in ((corpus, bases), (REPO / "bundles", examples)):
        verdicts = reference_verdicts(python, root, [f.name for f in folders])
        found = mzk_diagnostics(mzk, root)
        for folder in folders:
            errors = [d for d in found.get(folder.name, []) if is_error(d)]
            valid = verdicts[folder.name]["valid"]
            status = "ok" if valid and not errors else "FAIL"
            if status == "FAIL":
                failures += 1
            log(f"{status:4} {folder.name}: reference {'valid' if valid else 'INVALID'}, mzk {len(errors)} error(s)")
            for d in errors:
                log(f"       {d['path']}:{d['range']['start']['line']}: [{d['code']}] {d['message']}")

    # 2. Mutants.
    work = args.keep or Path(tempfile.mkdtemp(prefix="mzk-conformance-"))
    result = run([str(python), str(HERE / "mutate.py"), "--out", str(work),
                  "--catalogue-base", str(REPO / "bundles" / "SupportDesk"),
                  "--bases", *map(str, bases + examples),
                  "--shared", str(corpus / "_shared"),
                  "--count", str(args.count), "--seed", str(args.seed)])
    if result.returncode != 0:
        log(f"error: mutate.py failed:\n{result.stderr}")
        sys.exit(2)
    mutants = [json.loads(line) for line in result.stdout.splitlines()]
    verdicts = reference_verdicts(python, work, [m["folder"] for m in mutants])
    found = mzk_diagnostics(mzk, work)
    allowed = load_allowlist()

    table = collections.defaultdict(collections.Counter)
    disagreements = []
    for m in mutants:
        verdict = verdicts[m["folder"]]
        diagnostics = found.get(m["folder"], [])
        if not verdict["valid"]:
            agree = any(is_error(d) for d in diagnostics)
            cell = "reject/error" if agree else "reject/MISSED"
        else:
            agree = not any(is_contract_error(d) for d in diagnostics)
            cell = "accept/clean" if agree else "accept/FALSE-ERROR"
        table[m["operator"]][cell] += 1
        if not agree:
            disagreements.append((m, verdict, diagnostics))

    columns = ["reject/error", "accept/clean", "reject/MISSED", "accept/FALSE-ERROR"]
    log("")
    log(f"{'operator':<18}" + "".join(f"{c:>20}" for c in columns) + f"{'total':>8}")
    totals = collections.Counter()
    for operator in sorted(table):
        row = table[operator]
        totals.update(row)
        log(f"{operator:<18}" + "".join(f"{row[c]:>20}" for c in columns) + f"{sum(row.values()):>8}")
    log(f"{'all':<18}" + "".join(f"{totals[c]:>20}" for c in columns) + f"{sum(totals.values()):>8}")
    agreed = totals["reject/error"] + totals["accept/clean"]
    log(f"agreement: {agreed}/{sum(totals.values())} mutants")

    unexplained = 0
    for m, verdict, diagnostics in disagreements:
        reason = allowed.get(m["id"])
        tag = f"allowed ({reason})" if reason else "DISAGREE"
        if not reason:
            unexplained += 1
        log(f"\n{tag}: {m['id']} {m['folder']} [{m['operator']}] {m['file']} {m['detail']}")
        if not verdict["valid"]:
            log(f"  reference: {verdict['errors'][0][:300]}")
        for d in diagnostics:
            if is_contract_error(d) or not verdict["valid"]:
                log(f"  mzk: {d['path']}:{d['range']['start']['line']}: {d['severity']}[{d['code']}] {d['message'][:200]}")
    # 3. Fixes: `mzk check --fix` on every mutant with a safe fix must never
    #    make the reference's verdict worse, and must leave nothing to fix
    #    for a second run (idempotence).
    failures += check_fixes(mzk, python, work, mutants, verdicts, found)

    stale = sorted(set(allowed) - {m["id"] for m, _, _ in disagreements})
    if stale:
        log(f"\nnote: allow-list entries that now agree (remove them): {', '.join(stale)}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    failures += unexplained
    log(f"\nconformance: {agreed} passed, {sum(totals.values()) - agreed} failed ({len(disagreements) - unexplained} allow-listed); real bundles and examples: {'ok' if failures == unexplained else 'FAIL'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
