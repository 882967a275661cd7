#!/usr/bin/env python3
"""Fuzzing for mzk: seeds, then each cargo-fuzz target for a bounded time.

Usage: python3 scripts/fuzz.py [--seconds 60] [--targets yaml,bundle,expression,lsp]
                               [--parallel 2] [--build-only]

`--build-only` installs cargo-fuzz and builds the targets, nothing else: the
test command starts it in the background (at the lowest priority) while the
tests run, so the fuzzing stage finds its build done. Targets then run
`--parallel` at a time, one core each; each one's output goes to
fuzz/artifacts/<target>/log and is printed when it ends.

Seeds come from the example bundles, the fixtures, and the 15 real bundles of
mozaiks 0.2.0 when the conformance suite has unpacked them (~/.cache/mzk).
Targets run with `--sanitizer none` (stable Rust; coverage guidance still
works). A crash, a hang (-timeout) or running out of memory (-rss_limit_mb)
fails the run; the input is copied to fuzz/regressions/<target>/, where
`cargo test` replays it (tests/tests/fuzz_regressions.rs) once it is fixed.
A death that leaves libFuzzer no chance to write its artifact (a stack
overflow, a signal) still leaves its input: each target keeps the input it is
about to run in a file (`mzk_tests::fuzz::record`), kept as the reproducer
when the target ends without an artifact.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FUZZ = REPO / "fuzz"
TARGETS = ["yaml", "bundle", "expression", "lsp"]
# cargo fuzz builds into fuzz/target whatever CARGO_TARGET_DIR says, so that
# its build never waits on the lock of the tests' target folder.
CARGO_ENV = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
# Must match mzk_tests::fuzz::BUNDLE_FILES.
BUNDLE_FILES = [
    "orchestrator.yaml", "agents.yaml", "transition_graph.yaml", "context_variables.yaml",
    "tools.yaml", "structured_outputs.yaml", "middleware.yaml", "ui_config.yaml",
    "extended_orchestration/task_batches.yaml", "tools/a.py", "tools/b.py",
]


def bundle_dirs():
    roots = [REPO / "bundles", REPO / "tests" / "fixtures"]
    corpus = Path(os.environ.get("MZK_CACHE", Path.home() / ".cache" / "mzk")) / "conformance-0.2.0" / "corpus" / "workflows"
    if corpus.is_dir():
        roots.append(corpus)
    for root in roots:
        for orchestrator in sorted(root.rglob("orchestrator.yaml")):
            yield orchestrator.parent


def frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def seeds(target_dir):
    out = {t: [] for t in TARGETS}
    for bundle in bundle_dirs():
        files = []
        for name in BUNDLE_FILES[:9]:
            path = bundle / name
            files.append(path.read_bytes() if path.is_file() else b"")
        python = sorted((bundle / "tools").glob("*.py"))[:2] if (bundle / "tools").is_dir() else []
        files += [p.read_bytes() for p in python]
        out["bundle"].append(b"\0".join(files).rstrip(b"\0"))
        for path in sorted(bundle.rglob("*.yaml")):
            text = path.read_bytes()
            out["yaml"].append(text)
            for line in text.decode("utf-8", "replace").splitlines():
                if "context_expression:" in line:
                    out["expression"].append(line.split("context_expression:", 1)[1].strip().strip("\"'").encode())
    agents = (REPO / "bundles" / "SupportDesk" / "agents.yaml").read_text()
    uri = "file:///w/SupportDesk/agents.yaml"
    session = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "processId": None}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": agents}}},
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 8}}, "text": "nme"}]}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 12}}},
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/completion", "params": {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 6}}},
        {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": uri}}},
        {"jsonrpc": "2.0", "id": 5, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    out["lsp"].append(b"".join(frame(m) for m in session))
    out["lsp"].append(b"".join(frame(m) for m in session[:4]))
    for target, items in out.items():
        folder = target_dir / target
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for i, data in enumerate(items):
            (folder / f"seed-{i:04d}").write_bytes(data)
    return {t: len(v) for t, v in out.items()}


def last_run_input(path):
    """The input a target was running when it died, from its record file."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) < 8:
        return None
    length = int.from_bytes(data[:8], "little")
    return data[8:8 + length] if len(data) >= 8 + length else None


def describe_exit(code):
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit {code}"


def install_cargo_fuzz():
    if shutil.which("cargo-fuzz") is None:
        print("== installing cargo-fuzz 0.13.2", flush=True)
        subprocess.run(["cargo", "install", "--locked", "cargo-fuzz", "--version", "0.13.2"], check=True)


def start(target, seconds):
    """Starts one target; returns (process, artifacts folder, its log)."""
    corpus = FUZZ / "corpus" / target
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts = FUZZ / "artifacts" / target
    shutil.rmtree(artifacts, ignore_errors=True)
    artifacts.mkdir(parents=True)
    log = artifacts / "log"
    print(f"== fuzz {target} for {seconds} s", flush=True)
    process = subprocess.Popen(
        ["cargo", "fuzz", "run", "--sanitizer", "none", "--jobs", "1", target,
         str(corpus), str(FUZZ / "seeds" / target), "--",
         f"-max_total_time={seconds}", "-timeout=20", "-rss_limit_mb=2048",
         f"-artifact_prefix={artifacts}/", "-print_final_stats=1"],
        cwd=FUZZ, stdout=log.open("wb"), stderr=subprocess.STDOUT,
        env={**CARGO_ENV, "MZK_FUZZ_LAST_INPUT": str(artifacts / "last-input")})
    return process, artifacts, log


def finish(target, process, artifacts, log):
    """Waits for a target; returns what it found, or None."""
    returncode = process.wait()
    lines = log.read_text(errors="replace").splitlines()
    # The whole log when it failed; libFuzzer's final stats otherwise.
    shown = lines if returncode != 0 else lines[-12:]
    print(f"== {target}: {describe_exit(returncode)}\n" + "\n".join(f"   {line}" for line in shown), flush=True)
    last_input = artifacts / "last-input"
    # A slow unit (over 10 s, usually a loaded machine) is reported by
    # libFuzzer but is no failure: hangs are caught by -timeout.
    slow = [p for p in artifacts.iterdir() if p.name.startswith("slow-unit-")]
    for path in slow:
        print(f"note: {target}: a slow input (kept in {path}, not a failure)", flush=True)
    found = sorted(p for p in artifacts.iterdir() if p not in (last_input, log) and p not in slow)
    if returncode == 0 and not found:
        return None
    keep = REPO / "fuzz" / "regressions" / target
    keep.mkdir(parents=True, exist_ok=True)
    kept = []
    for path in found:
        shutil.copy(path, keep / path.name)
        kept.append(keep / path.name)
    if not found:
        # Killed before libFuzzer could write an artifact: the input
        # being run is the reproducer.
        reproducer = last_run_input(last_input)
        if reproducer is not None:
            path = keep / f"died-{hashlib.sha1(reproducer).hexdigest()}"
            path.write_bytes(reproducer)
            kept.append(path)
    lines = [f"{target}: {describe_exit(returncode)}; inputs kept: {[str(p.relative_to(REPO)) for p in kept] or 'none (the target never started an input)'}"]
    for path in kept:
        lines.append(f"  replay: (cd fuzz && cargo fuzz run --sanitizer none {target} {path.relative_to(FUZZ)})")
    if kept:
        lines.append("  once fixed, `cargo test -p mzk-tests --test fuzz_regressions` replays them on every run")
    return "\n  ".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--parallel", type=int, default=2,
                        help="targets run at once, one core each (default 2)")
    parser.add_argument("--build-only", action="store_true",
                        help="install cargo-fuzz and build the targets, then exit")
    args = parser.parse_args()
    install_cargo_fuzz()
    targets = args.targets.split(",")
    if args.build_only:
        subprocess.run(["cargo", "fuzz", "build", "--sanitizer", "none"], cwd=FUZZ, env=CARGO_ENV, check=True)
        print("== fuzz targets built", flush=True)
        return
    counts = seeds(FUZZ / "seeds")
    print(f"== seeds: {counts}", flush=True)
    # One build for every target before any runs (a no-op when the
    # background build of the test command finished it).
    subprocess.run(["cargo", "fuzz", "build", "--sanitizer", "none"], cwd=FUZZ, env=CARGO_ENV, check=True)
    failed = []
    for i in range(0, len(targets), max(1, args.parallel)):
        running = [(t, *start(t, args.seconds)) for t in targets[i:i + max(1, args.parallel)]]
        for target, process, artifacts, log in running:
            problem = finish(target, process, artifacts, log)
            if problem:
                failed.append(problem)
    if failed:
        print("fuzzing found problems:\n  " + "\n  ".join(failed))
        sys.exit(1)
    print("== fuzzing: no crash, hang or out-of-memory")


if __name__ == "__main__":
    main()
