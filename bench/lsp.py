#!/usr/bin/env python3
"""Benchmark: `mzk lsp` as a separate process over stdio, driven by a minimal
stdlib LSP client, on the real bundles of mozaiks 0.2.0 (fetched from PyPI by
the conformance harness).

Prints:
  - latency from each textDocument/didChange on AppGenerator/agents.yaml
    (324 KB) to the publishDiagnostics carrying that document version, over
    --edits edits: p50, p99, max;
  - the server's peak RSS (VmHWM) after a file of every real bundle is open;
  - the same didChange latency, in the same run, for yaml-language-server
    (npm, pinned below; installed once into ~/.cache/mzk) validating the same
    file against the JSON Schema `mzk schema` exports for agents.yaml, over
    --peer-edits edits, and the ratio of the medians.

Usage: python3 bench/lsp.py [--edits 200] [--peer-edits 30] [--no-peer]
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "conformance"))
import run as conformance  # noqa: E402  (reuses the cached reference install)


YAML_LANGUAGE_SERVER = "2.0.0"


class Server:
    def __init__(self, argv, settings=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL if settings else None)
        self.next_id = 1
        # Answers to the server's workspace/configuration requests.
        self.settings = settings or {}

    def answer(self, message):
        """Answers a request from the server (configuration, registrations)."""
        result = None
        if message["method"] == "workspace/configuration":
            result = [self.settings.get(item.get("section", ""), None) for item in message["params"]["items"]]
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self):
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == rid and "method" not in message:
                return message
            if "id" in message and "method" in message:  # a server request
                self.answer(message)

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics(self, uri, version):
        while True:
            message = self.receive()
            if "id" in message and "method" in message:
                self.answer(message)
            if message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                if params["uri"] == uri and (version is None or params.get("version") == version):
                    return params["diagnostics"]

    def peak_rss_kib(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return None


def percentile(values, p):
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def edit_latencies(server, uri, text, edits, versioned):
    """Alternately types and deletes one character at the end of the first
    description line (every edit changes the text, the bundle stays valid);
    returns the milliseconds from each didChange to its diagnostics."""
    lines = text.split("\n")
    line_no = next(i for i, l in enumerate(lines) if "description:" in l)
    column = len(lines[line_no].encode("utf-16-le")) // 2
    latencies = []
    for k in range(edits):
        version = k + 2
        end = column + (0 if k % 2 == 0 else 1)
        change = {"range": {"start": {"line": line_no, "character": column}, "end": {"line": line_no, "character": end}},
                  "text": "x" if k % 2 == 0 else ""}
        start = time.perf_counter()
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
        # yaml-language-server publishes without a version: the next
        # publication for the file is the answer to this (only) change.
        server.diagnostics(uri, version if versioned else None)
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies


def yaml_language_server():
    """The yaml-language-server entry point, installed once with npm; None
    when npm or the registry is unavailable."""
    prefix = Path.home() / ".cache" / "mzk" / f"yaml-language-server-{YAML_LANGUAGE_SERVER}"
    entry = prefix / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"
    if not entry.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                                 f"yaml-language-server@{YAML_LANGUAGE_SERVER}"],
                                capture_output=True, text=True)
        if result.returncode != 0 or not entry.exists():
            print(f"peer: yaml-language-server could not be installed: {result.stderr.strip()[-300:]}")
            return None
    return entry


def peer(target, edits):
    """yaml-language-server on the same file with mzk's JSON Schema for it."""
    entry = yaml_language_server()
    if entry is None:
        return None
    schemas = Path.home() / ".cache" / "mzk" / "bench-schemas"
    subprocess.run([str(REPO / "target" / "release" / "mzk"), "schema", "--out", str(schemas)],
                   check=True, capture_output=True)
    schema_uri = (schemas / "agents.schema.json").as_uri()
    settings = {"yaml": {"validate": True, "schemas": {schema_uri: ["**/agents.yaml"]},
                         "schemaStore": {"enable": False}, "format": {"enable": False},
                         "hover": False, "completion": False}}
    server = Server(["node", str(entry), "--stdio"], settings)
    server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {
        "workspace": {"configuration": True, "didChangeConfiguration": {"dynamicRegistration": True}},
        "textDocument": {"publishDiagnostics": {"relatedInformation": True}}}})
    server.notify("initialized", {})
    server.notify("workspace/didChangeConfiguration", {"settings": settings})
    # The same bytes at a path without dot-folders: yaml-language-server's
    # globs never match inside `~/.cache`.
    copy = Path(tempfile.mkdtemp(prefix="mzk-bench-")) / "agents.yaml"
    shutil.copyfile(target, copy)
    uri = copy.as_uri()
    text = copy.read_text()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    opened = server.diagnostics(uri, None)
    latencies = edit_latencies(server, uri, text, edits, versioned=False)
    # Prove the schema is in effect: misspell the first agent's `name` key.
    lines = text.split("\n")
    line_no = next(i for i, l in enumerate(lines) if l.lstrip().startswith("- name:"))
    column = len(lines[line_no].split("name:")[0].encode("utf-16-le")) // 2 + len("name")
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": edits + 2}, "contentChanges": [
        {"range": {"start": {"line": line_no, "character": column}, "end": {"line": line_no, "character": column}}, "text": "x"}]})
    flagged = server.diagnostics(uri, None)
    shutil.rmtree(copy.parent, ignore_errors=True)
    server.request("shutdown", None)
    server.notify("exit", None)
    try:
        server.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.proc.kill()
    return latencies, len(opened), flagged


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--peer-edits", type=int, default=30)
    parser.add_argument("--no-peer", action="store_true", help="skip yaml-language-server")
    args = parser.parse_args()
    build = subprocess.run(["cargo", "build", "--release", "-q", "-p", "mzk-server"], cwd=REPO)
    if build.returncode != 0:
        sys.exit(2)
    _, corpus = conformance.ensure_reference(conformance.cache_dir())
    bundles = conformance.real_bundles(corpus)
    target = next(b for b in bundles if b.name == "AppGenerator") / "agents.yaml"
    text = target.read_text()

    server = Server([str(REPO / "target" / "release" / "mzk"), "lsp"])
    server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    server.notify("initialized", {})
    uri = target.as_uri()
    start = time.perf_counter()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    server.diagnostics(uri, 1)
    first = (time.perf_counter() - start) * 1000
    latencies = edit_latencies(server, uri, text, args.edits, versioned=True)

    # Every real bundle open at once.
    for bundle in bundles:
        path = bundle / "orchestrator.yaml"
        other = path.as_uri()
        server.notify("textDocument/didOpen", {"textDocument": {"uri": other, "languageId": "yaml", "version": 1, "text": path.read_text()}})
        server.diagnostics(other, 1)
    rss = server.peak_rss_kib()
    server.request("shutdown", None)
    server.notify("exit", None)
    server.proc.wait(timeout=10)

    print(f"file: {target.relative_to(corpus.parent)} ({len(text.encode()) / 1024:.0f} KB)")
    print(f"mzk didOpen -> diagnostics: {first:.1f} ms")
    print(f"mzk didChange -> publishDiagnostics over {len(latencies)} edits: "
          f"p50 {statistics.median(latencies):.1f} ms, p99 {percentile(latencies, 99):.1f} ms, "
          f"max {max(latencies):.1f} ms")
    print(f"mzk peak RSS with {len(bundles)} bundles open: {rss / 1024:.1f} MiB" if rss else "peak RSS: unavailable")
    if args.no_peer:
        return
    measured = peer(target, args.peer_edits)
    if measured is None:
        return
    peer_latencies, diagnostics, flagged = measured
    if not flagged:
        print("peer: yaml-language-server reported nothing for a misspelt key: the schema is not in effect; no comparison")
        return
    print(f"yaml-language-server checks the schema: a misspelt key gives {flagged[0]['message'][:80]!r}")
    print(f"yaml-language-server {YAML_LANGUAGE_SERVER} (schema from `mzk schema`, {diagnostics} diagnostics on open) "
          f"didChange -> publishDiagnostics over {len(peer_latencies)} edits: "
          f"p50 {statistics.median(peer_latencies):.1f} ms, p99 {percentile(peer_latencies, 99):.1f} ms")
    print(f"ratio (yaml-language-server p50 / mzk p50): {statistics.median(peer_latencies) / statistics.median(latencies):.1f}x")


if __name__ == "__main__":
    main()
