"""PyYAML's `safe_load` (mozaiks' loader: the pure-Python SafeLoader) over
every YAML file under the folders given, the same files `mzk-bench` reads
(`*.yaml`, recursively, in sorted order); run with the reference's
interpreter. Prints one JSON line: files, bytes, median_ms, min_ms.

    python yaml_pyyaml.py FOLDER... [--runs N]
"""
import json
import statistics
import sys
import time
from pathlib import Path

import yaml


def yaml_files(folder):
    for path in sorted(folder.iterdir()):
        if path.is_dir():
            yield from yaml_files(path)
        elif path.suffix == ".yaml":
            yield path


def main():
    args = sys.argv[1:]
    runs = 10
    if "--runs" in args:
        at = args.index("--runs")
        runs = int(args[at + 1])
        del args[at:at + 2]
    texts = [p.read_text(encoding="utf-8") for folder in args for p in yaml_files(Path(folder))]

    def load_all():
        for text in texts:
            try:
                yaml.safe_load(text)
            except yaml.YAMLError:
                pass

    load_all()  # warm-up, as mzk-bench does
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        load_all()
        times.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"files": len(texts), "bytes": sum(len(t.encode()) for t in texts),
                      "median_ms": statistics.median(times), "min_ms": min(times)}))


if __name__ == "__main__":
    main()
