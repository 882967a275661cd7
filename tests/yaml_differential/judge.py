"""PyYAML's verdict on each document, run with the reference's interpreter
(mozaiks 0.2.0's virtualenv, whose PyYAML is the one mozaiks loads bundles
with): reads JSON lines {"id", "text"} on stdin, writes one JSON line per
document on stdout, in the same order:

- {"id", "error": INDEX, "line", "column", "problem"} when `yaml.safe_load`
  refuses the text (INDEX counts characters, as `Mark.index` does; line and
  column are 1-based), or
- {"id", "value": V} with the value in the typed form mzk-yaml-dump writes
  (see tests/src/yaml_dump.rs).
"""
import datetime
import json
import sys

import yaml


def typed(value, active):
    if value is None:
        return None
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, str):
        return value
    if isinstance(value, datetime.datetime):
        return {"datetime": str(value)}
    if isinstance(value, datetime.date):
        return {"date": value.isoformat()}
    if isinstance(value, bytes):
        return {"binary": value.hex()}
    if id(value) in active:
        return {"recursive": None}
    active = active | {id(value)}
    if isinstance(value, (list, tuple)):
        return [typed(item, active) for item in value]
    if isinstance(value, dict):
        return {"map": [[typed(k, active), typed(v, active)] for k, v in value.items()]}
    if isinstance(value, set):
        return {"set": sorted(json.dumps(typed(k, active)) for k in value)}
    return {"unknown": type(value).__name__}


def verdict(text):
    try:
        return {"value": typed(yaml.safe_load(text), frozenset())}
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        if mark is None:
            return {"error": None, "line": None, "column": None, "problem": str(e)}
        return {"error": mark.index, "line": mark.line + 1, "column": mark.column + 1,
                "problem": f"{e.context + ', ' if e.context else ''}{e.problem}"}
    except yaml.reader.ReaderError as e:
        return {"error": e.position, "line": None, "column": None, "problem": e.reason}
    except yaml.YAMLError as e:
        return {"error": None, "line": None, "column": None, "problem": str(e)}
    except Exception as e:  # a constructor's own error (`!!float abc`): mozaiks cannot load it either
        return {"error": None, "line": None, "column": None, "problem": f"{type(e).__name__}: {e}"}


def main():
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        answer = verdict(case["text"])
        answer["id"] = case["id"]
        out.write(json.dumps(answer) + "\n")
    out.write(json.dumps({"pyyaml": yaml.__version__}) + "\n")


if __name__ == "__main__":
    main()
