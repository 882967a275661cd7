#!/usr/bin/env python3
"""Prints the path of the official SARIF 2.1.0 JSON Schema (OASIS, the
`sarif-schema-2.1.0.json` that GitHub code scanning names), fetched once into
the mzk cache.

The schema is not copied into this repository: it is taken from the
serde-sarif crate on crates.io, which ships it unchanged as src/schema.json.
The crate file is pinned by version and by the SHA-256 that the crates.io
index records for it, so the test always validates against the same bytes.
"""
import hashlib
import io
import json
import os
import sys
import tarfile
import urllib.request
from pathlib import Path

CRATE = "serde-sarif"
VERSION = "0.8.0"
SHA256 = "a053c46f18a8043570d4e32fefc4c6377f82bf29ec310a33e93f273048e3b0be"
MEMBER = f"{CRATE}-{VERSION}/src/schema.json"
URL = f"https://static.crates.io/crates/{CRATE}/{CRATE}-{VERSION}.crate"
SCHEMA_ID = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"


def cache_dir():
    root = os.environ.get("MZK_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mzk")
    return Path(root) / "sarif"


def fetch(crate):
    try:
        with urllib.request.urlopen(URL, timeout=60) as response:
            data = response.read()
    except OSError as e:
        sys.exit(f"error: cannot download {URL}: {e}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"error: {URL} has SHA-256 {digest}, expected {SHA256}")
    crate.parent.mkdir(parents=True, exist_ok=True)
    partial = crate.with_suffix(f".{os.getpid()}")
    partial.write_bytes(data)
    partial.replace(crate)


def main():
    cache = cache_dir()
    crate = cache / f"{CRATE}-{VERSION}.crate"
    if not crate.exists() or hashlib.sha256(crate.read_bytes()).hexdigest() != SHA256:
        fetch(crate)
    with tarfile.open(crate, "r:gz") as archive:
        text = archive.extractfile(MEMBER).read()
    schema = json.loads(text)
    if schema.get("$id") != SCHEMA_ID:
        sys.exit(f"error: {MEMBER} is not the SARIF 2.1.0 schema (its $id is {schema.get('$id')!r})")
    out = cache / "sarif-schema-2.1.0.json"
    partial = out.with_suffix(f".{os.getpid()}")
    partial.write_bytes(text)
    partial.replace(out)
    print(out)


if __name__ == "__main__":
    main()
