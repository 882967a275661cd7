#!/usr/bin/env python3
"""Runs mozaiks 0.2.0's own validator on bundle folders; one JSON line per bundle.

Run with the interpreter of a virtualenv that has mozaiks installed, with
MOZAIKS_WORKFLOWS_PATH set to the folder holding the bundles: mozaiks binds its
workflow manager to one root per process at import time.
"""
import json
import logging
import sys
import time
from pathlib import Path


def main(paths):
    # Stdout carries the JSON lines alone: whatever mozaiks and its
    # dependencies print while importing or validating goes to stderr.
    answer = sys.stdout
    sys.stdout = sys.stderr
    logging.disable(logging.CRITICAL)
    from mozaiksai.core.workflow.workflow_manager import UnifiedWorkflowManager

    for raw in paths:
        bundle = Path(raw).resolve()
        manager = UnifiedWorkflowManager(workflows_base_path=str(bundle.parent))
        started = time.perf_counter()
        try:
            result = manager.validate_workflow(bundle.name)
            verdict = {"valid": bool(result["valid"]), "errors": [str(e) for e in result["errors"]]}
        except Exception as err:  # the reference crashed: that is a rejection, say so
            verdict = {"valid": False, "errors": [f"reference crashed: {type(err).__name__}: {err}"]}
        verdict["ms"] = round((time.perf_counter() - started) * 1000, 2)
        print(json.dumps({"bundle": bundle.name, **verdict}), file=answer, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
