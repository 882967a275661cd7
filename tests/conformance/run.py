#!/usr/bin/env python3
"""Conformance suite: mzk against mozaiks 0.2.0's own validator.

1. Installs mozaiks==0.2.0 from PyPI into a cached virtualenv and unpacks the
   15 real bundles its wheel ships (factory_app/workflows, with _shared/).
2. Checks that mzk reports no error on the real bundles and the examples,
   and (real_fixes.py) that every fix it offers on the real bundles, applied
   alone or all together, leaves them loadable by the reference and free of
   mzk errors.
3. Generates mutants (mutate.py): the mistake catalogue applied to the
   SupportDesk example, and seeded random single edits of every base bundle.
4. Asks the reference and mzk about each mutant and compares:
     - reference rejects  -> mzk must report at least one error;
     - reference accepts  -> mzk must report no error of the MZ0xx/MZ1xx families
       (the checks that mirror the reference's load-time contract).
   Prints the agreement table. Disagreements must be listed, with a reason, in
   allowlist.txt; any other disagreement fails the suite.
5. Syntax (syntax.py): one-character edits of the real YAML files, judged by
   the reference's PyYAML; mzk must agree on each verdict and report its
   error at PyYAML's line and column for at least 90% of them.
6. Python syntax (python_syntax.py): small edits of the real Python modules
   and hand-written compile errors, judged by the reference's interpreter
   (CPython's parser and compiler); mzk's MZ504 must agree on each verdict
   and be on CPython's line for at least 90% of the parse errors.

Stdlib only. Exit 0 on agreement, 1 on disagreement, 2 on a harness failure,
3 when PyPI is unreachable and nothing is cached (the reference cannot be had;
the tests decide whether that skips or fails).

Output contract: stdout carries only the answer (the report, or the one path
`--print-corpus`/`--print-python` asks for); progress and errors go to stderr,
so a program that reads stdout never sees a log line.
"""
import argparse
import collections
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import python_syntax
import real_fixes
import syntax

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VERSION = "0.2.0"
# mozaiks 0.2.0 takes any PyYAML; mzk reads YAML by the rules of this one
# (the newest, what a fresh install gets), so the oracle cannot drift.
PYYAML = "6.0.4"
# The in-memory MongoDB the runtime stage (engines.py) runs mozaiks with.
MONGOMOCK_MOTOR = "0.0.36"
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


# The exit status that says "the reference cannot be had" (PyPI unreachable
# and nothing cached), told apart from a failure of the harness (2).
UNREACHABLE = 3


def log(message):
    """A line of the report: stdout."""
    print(message, flush=True)


def note(message):
    """Progress and errors: stderr, never mixed into the answer on stdout."""
    print(message, file=sys.stderr, flush=True)


def cache_dir():
    root = os.environ.get("MZK_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mzk")
    return Path(root) / f"conformance-{VERSION}"


def run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


def pip_failed(what, result):
    output = (result.stdout or "") + (result.stderr or "")
    if any(marker in output for marker in NETWORK_MARKERS):
        note(f"SKIP: the PyPI registry is unreachable, so mozaiks=={VERSION} could not be {what}; "
             "the conformance suite needs it once (it is cached afterwards).")
        note(output.strip().splitlines()[-1] if output.strip() else "")
        sys.exit(UNREACHABLE)
    note(f"error: pip could not get mozaiks=={VERSION} ({what}):\n{output}")
    sys.exit(2)


def ensure_reference(cache):
    """Returns (python of the reference venv, folder of the real bundles).
    Several test processes may ask at once on a fresh machine: one installs
    while the others wait on the lock."""
    import fcntl
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_reference(cache)


def _ensure_reference(cache):
    venv = cache / "venv"
    python = venv / "bin" / "python"
    ok = python.exists() and run([str(python), "-c", "import mozaiksai, yaml, mongomock_motor; "
                                  f"assert yaml.__version__ == {PYYAML!r}"]).returncode == 0
    if not ok:
        note(f"installing mozaiks=={VERSION} from PyPI into {venv} (once)")
        shutil.rmtree(venv, ignore_errors=True)
        result = run([sys.executable, "-m", "venv", str(venv)])
        if result.returncode != 0:
            note(f"error: cannot create a virtualenv: {result.stderr}")
            sys.exit(2)
        result = run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                      "--timeout", "30", f"mozaiks=={VERSION}", f"PyYAML=={PYYAML}",
                      f"mongomock-motor=={MONGOMOCK_MOTOR}"])
        if result.returncode != 0:
            pip_failed("installed", result)
    corpus = cache / "corpus" / "workflows"
    if not corpus.is_dir():
        note(f"unpacking the bundles shipped in the mozaiks=={VERSION} wheel")
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


def bundle_digest(root, folder):
    """What the reference's verdict on a bundle depends on: its files and the
    root's _shared/ (tools import from it), by path and content."""
    digest = hashlib.sha256(VERSION.encode())
    for base in (root / folder, root / "_shared"):
        if not base.is_dir():
            continue
        for path in sorted(p for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(str(path.relative_to(root if base.name == "_shared" else base)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def reference_verdicts(python, root, folders):
    """The reference's verdict on each bundle folder. The reference is pinned,
    so its verdict on the same bytes never changes: verdicts are kept by
    content in the cache and the reference runs only on bundles it has not
    judged (the seeded mutants are the same on every run)."""
    store = cache_dir() / "verdicts"
    store.mkdir(parents=True, exist_ok=True)
    verdicts, digests, todo = {}, {}, []
    for folder in folders:
        digests[folder] = bundle_digest(root, folder)
        cached = store / f"{digests[folder]}.json"
        if cached.is_file():
            verdicts[folder] = dict(json.loads(cached.read_text()), bundle=folder)
        else:
            todo.append(folder)
    if todo:
        env = dict(os.environ, MOZAIKS_WORKFLOWS_PATH=str(root))
        result = run([str(python), str(HERE / "reference.py"), *[str(root / f) for f in todo]], env=env)
        if result.returncode != 0:
            note(f"error: the reference validator failed:\n{result.stderr}")
            sys.exit(2)
        for line in result.stdout.splitlines():
            record = json.loads(line)
            verdicts[record["bundle"]] = record
            (store / f"{digests[record['bundle']]}.json").write_text(json.dumps(record))
    log(f"reference: {len(folders) - len(todo)} of {len(folders)} verdicts from the cache ({store})")
    return verdicts


def mzk_diagnostics(mzk, root):
    """{bundle folder name: [diagnostic]} for every bundle under root."""
    result = run([str(mzk), "check", ".", "--output-format", "json"], cwd=root)
    if result.returncode not in (0, 1):
        note(f"error: mzk check failed ({result.returncode}):\n{result.stderr}")
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


# Pydantic error types a JSON Schema can express (unknown and missing keys,
# types, enums and literals, bounds): a single-file rejection made only of
# these must be a rejection by the exported schema too.
SCHEMA_ERROR_TYPES = {
    "extra_forbidden", "missing", "string_type", "int_type", "int_parsing", "int_from_float",
    "float_type", "float_parsing", "bool_type", "bool_parsing", "dict_type", "list_type",
    "model_type", "model_attributes_type", "literal_error", "enum", "greater_than_equal",
    "less_than_equal", "greater_than", "less_than", "too_short", "string_too_short",
}


def check_schemas(mzk, schema_check, work, mutants, verdicts):
    """The JSON Schemas of `mzk schema`, judged by an independent validator
    (mzk-schema-check, the jsonschema crate) on the mutants: every rejection
    of one file that JSON Schema can express must be a schema rejection, and
    nothing the reference accepts may be rejected by a schema. Returns the
    number of failures."""
    schemas = Path(tempfile.mkdtemp(prefix="mzk-conformance-schemas-"))
    try:
        result = run([str(mzk), "schema", "--out", str(schemas)])
        if result.returncode != 0:
            note(f"error: mzk schema failed:\n{result.stderr}")
            sys.exit(2)
        result = run([str(schema_check), str(schemas), *[str(work / m["folder"]) for m in mutants]])
        if result.returncode != 0:
            note(f"error: mzk-schema-check failed:\n{result.stderr}")
            sys.exit(2)
    finally:
        shutil.rmtree(schemas, ignore_errors=True)
    judged = {}
    for line in result.stdout.splitlines():
        record = json.loads(line)
        judged[record["bundle"]] = record["errors"]
    expressible, missed, stricter = 0, [], []
    for m in mutants:
        verdict, errors = verdicts[m["folder"]], judged.get(m["folder"], [])
        if verdict["valid"]:
            if errors:
                stricter.append((m, errors))
            continue
        first = verdict["errors"][0]
        # The file the reference rejects (catalogue mutants do not name theirs).
        rejected = re.match(r"Invalid ([\w/]+\.yaml): ", first)
        types = set(re.findall(r"\[type=([a-z_]+)", first))
        if not rejected or not types or not types <= SCHEMA_ERROR_TYPES:
            continue
        expressible += 1
        if not any(e["file"] == rejected.group(1) for e in errors):
            missed.append((m, first))
    log(f"\nschemas: {expressible} single-file rejections JSON Schema can express, "
        f"{expressible - len(missed)} rejected by the exported schema; "
        f"{sum(1 for m in mutants if verdicts[m['folder']]['valid'])} accepted mutants, "
        f"{len(stricter)} rejected by a schema")
    for m, first in missed:
        log(f"  SCHEMA ACCEPTS: {m['id']} {m['folder']} [{m['operator']}] {m['file']} {m['detail']}: {first[:200]}")
    for m, errors in stricter:
        log(f"  SCHEMA STRICTER: {m['id']} {m['folder']} [{m['operator']}] {errors[0]['file']}: {errors[0]['message'][:200]}")
    return len(missed) + len(stricter)


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
            note(f"error: allowlist entry `{mid}` has no reason")
            sys.exit(2)
        allowed[mid] = reason.strip()
    return allowed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mzk", type=Path, help="the mzk binary")
    parser.add_argument("--print-corpus", action="store_true",
                        help="install the reference if needed, print the folder of its real bundles, exit")
    parser.add_argument("--print-python", action="store_true",
                        help="install the reference if needed, print the Python of its virtualenv, exit")
    parser.add_argument("--count", type=int, default=320, help="random mutants (default 320)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--syntax-count", type=int, default=800,
                        help="one-character edits of the real YAML for the syntax stage (default 800)")
    parser.add_argument("--python-syntax-count", type=int, default=600,
                        help="small edits of the real Python for the Python syntax stage (default 600)")
    parser.add_argument("--keep", type=Path, help="write mutants here and keep them")
    parser.add_argument("--schema-check", type=Path,
                        help="the mzk-schema-check binary: also judge the exported JSON Schemas on the mutants")
    args = parser.parse_args()
    if args.print_corpus:
        print(ensure_reference(cache_dir())[1])
        return
    if args.print_python:
        print(ensure_reference(cache_dir())[0])
        return
    if args.mzk is None:
        parser.error("--mzk is required")
    mzk = args.mzk.resolve()

    python, corpus = ensure_reference(cache_dir())
    bases = real_bundles(corpus)
    examples = sorted(p for p in (REPO / "bundles").iterdir() if (p / "orchestrator.yaml").is_file())
    failures = 0

    # 1. The real bundles and the examples: valid for the reference, no error from mzk.
    found_on_real = {}
    for root, folders in ((corpus, bases), (REPO / "bundles", examples)):
        verdicts = reference_verdicts(python, root, [f.name for f in folders])
        found = mzk_diagnostics(mzk, root)
        if root == corpus:
            found_on_real = found
        for folder in folders:
            errors = [d for d in found.get(folder.name, []) if is_error(d)]
            valid = verdicts[folder.name]["valid"]
            status = "ok" if valid and not errors else "FAIL"
            if status == "FAIL":
                failures += 1
            log(f"{status:4} {folder.name}: reference {'valid' if valid else 'INVALID'}, mzk {len(errors)} error(s)")
            for d in errors:
                log(f"       {d['path']}:{d['range']['start']['line']}: [{d['code']}] {d['message']}")

    # 1b. Every fix offered on the real bundles keeps them loadable and
    #     free of mzk errors, alone and all together.
    log("")
    failures += real_fixes.check(mzk, python, corpus, found_on_real, reference_verdicts,
                                 mzk_diagnostics, log)

    # 2. Mutants.
    work = args.keep or Path(tempfile.mkdtemp(prefix="mzk-conformance-"))
    result = run([str(python), str(HERE / "mutate.py"), "--out", str(work),
                  "--catalogue-base", str(REPO / "bundles" / "SupportDesk"),
                  "--bases", *map(str, bases + examples),
                  "--shared", str(corpus / "_shared"),
                  "--count", str(args.count), "--seed", str(args.seed)])
    if result.returncode != 0:
        note(f"error: mutate.py failed:\n{result.stderr}")
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
    if args.schema_check:
        failures += check_schemas(mzk, args.schema_check.resolve(), work, mutants, verdicts)
    # 4. Syntax errors where and as PyYAML reports them.
    failures += syntax.check(mzk, python, corpus, work, args.syntax_count, args.seed, log)
    # 5. Python syntax errors where and as CPython's parser reports them.
    failures += python_syntax.check(mzk, python, corpus, work, args.python_syntax_count, args.seed, log)

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
