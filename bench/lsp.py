#!/usr/bin/env python3
"""Benchmark: `mzk lsp` as a separate process over stdio, driven by a minimal
stdlib LSP client, on the real bundles of mozaiks 0.2.0 (fetched from PyPI by
the conformance harness).

Prints:
  - latency from each textDocument/didChange on AppGenerator/agents.yaml
    (324 KB) to the publishDiagnostics carrying that document version, over
    --edits edits: p50, p99, max;
  - the server's peak RSS (VmHWM) after a file of every real bundle is open.

Usage: python3 bench/lsp.py [--edits 200]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "conformance"))
import run as conformance  # noqa: E402  (reuses the cached reference install)


class Server:
    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 1

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
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics(self, uri, version):
        while True:
            message = self.receive()
            if "id" in message and "method" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=200)
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

    # Alternately type and delete one character at the end of the first
    # description line: every edit changes the text, the bundle stays valid.
    lines = text.split("\n")
    line_no = next(i for i, l in enumerate(lines) if "description:" in l)
    column = len(lines[line_no].encode("utf-16-le")) // 2
    latencies = []
    for k in range(args.edits):
        version = k + 2
        if k % 2 == 0:
            change = {"range": {"start": {"line": line_no, "character": column}, "end": {"line": line_no, "character": column}}, "text": "x"}
        else:
            change = {"range": {"start": {"line": line_no, "character": column}, "end": {"line": line_no, "character": column + 1}}, "text": ""}
        start = time.perf_counter()
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
        server.diagnostics(uri, version)
        latencies.append((time.perf_counter() - start) * 1000)

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
    print(f"didOpen -> diagnostics: {first:.1f} ms")
    print(f"didChange -> publishDiagnostics over {len(latencies)} edits: "
          f"p50 {statistics.median(latencies):.1f} ms, p99 {percentile(latencies, 99):.1f} ms, "
          f"max {max(latencies):.1f} ms")
    print(f"peak RSS with {len(bundles)} bundles open: {rss / 1024:.1f} MiB" if rss else "peak RSS: unavailable")


if __name__ == "__main__":
    main()
