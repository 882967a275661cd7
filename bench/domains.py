#!/usr/bin/env python3
"""The value domains of the variables routing reads, over a folder of
bundles: for each bundle, `mzk graph --format json`'s `variables`, then how
many routing variables (booleans apart, by declared type) have a known
domain, and each unknown one with its reason. The figure issue #41 measures:

    python3 bench/domains.py <workflows folder> [--mzk target/release/mzk]
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--mzk", default=str(Path(__file__).resolve().parents[1] / "target/release/mzk"))
    args = parser.parse_args()
    rows = []
    for bundle in sorted(p for p in args.root.iterdir() if (p / "orchestrator.yaml").is_file()):
        out = subprocess.run([args.mzk, "graph", str(bundle), "--format", "json"],
                             capture_output=True, text=True)
        try:
            variables = json.loads(out.stdout)["variables"]
        except (ValueError, KeyError):
            print(f"{bundle.name}: no graph ({out.stderr.strip()[:200]})", file=sys.stderr)
            continue
        for v in variables:
            boolean = str(v.get("type") or "").lower() in ("boolean", "bool")
            rows.append((bundle.name, v["name"], boolean, v["domain"]))
    other = [r for r in rows if not r[2]]
    known = [r for r in other if r[3]["kind"] in ("known", "integers")]
    print(f"routing variables: {len(rows)}, not boolean: {len(other)}, "
          f"of those with a known domain: {len(known)}")
    for bundle, name, boolean, domain in rows:
        kind = domain["kind"]
        detail = ", ".join(domain.get("values", [])) if "values" in domain else domain.get("because", "")
        print(f"{'bool ' if boolean else '     '}{bundle:40} {name:40} {kind:9} {detail}")


if __name__ == "__main__":
    main()
