"""Syntax errors where and as PyYAML reports them.

Seeded one-character edits (a tab, a quote, a colon, a bracket, an anchor
sign, a deletion …) of every YAML file of the real bundles. PyYAML, the
parser mozaiks loads bundles with, judges each edited text; mzk must agree on
the verdict (PyYAML rejects -> an MZ00x error; PyYAML accepts -> no MZ001),
and its first syntax error must start at PyYAML's line and column for at
least MIN_POSITION_AGREEMENT of the rejected texts.

Run by run.py with the reference's interpreter (which has PyYAML): the
judging half runs there (`python syntax.py judge DIR`), the rest here.
"""
import json
import random
import re
import subprocess
import sys
from pathlib import Path

EDITS = ["\t", '"', "'", ":", "[", "]", "{", "}", "-", "&", "*", "\\", "#", "@", "`", " ", "|", ">", "%", "!", "?", ","]
MIN_POSITION_AGREEMENT = 0.9
# saphyr reads `&name:` as an anchor named "name:" (YAML 1.2); PyYAML ends
# the name at the colon and reads an anchored empty key (which mozaiks'
# schema then refuses). Documented in docs/rules/MZ001.md.
ANCHOR_BEFORE_COLON = re.compile(r"[&*][A-Za-z0-9_-]+:")


def make(corpus, out, count, seed):
    rnd = random.Random(seed)
    files = sorted(p for p in Path(corpus).rglob("*.yaml") if p.stat().st_size < 200_000)
    cases = []
    for i in range(count):
        path = rnd.choice(files)
        text = path.read_text(encoding="utf-8")
        if not text:
            continue
        pos = rnd.randrange(len(text))
        kind = rnd.random()
        ch = rnd.choice(EDITS)
        if kind < 0.6:
            new = text[:pos] + ch + text[pos:]
        elif kind < 0.8:
            new = text[:pos] + text[pos + 1:]
        else:
            new = text[:pos] + ch + text[pos + 1:]
        folder = out / f"y{i:04d}"
        folder.mkdir(parents=True)
        # Any bundle file name will do: only MZ00x findings are compared.
        (folder / "orchestrator.yaml").write_text(new, encoding="utf-8")
        cases.append({"folder": folder.name, "source": str(path.relative_to(corpus)), "offset": pos, "edit": repr(ch)})
    return cases


def judge(root):
    """Prints {folder: null | [line, column, problem]} as PyYAML sees each text."""
    import yaml  # the reference's PyYAML

    verdicts = {}
    for folder in sorted(Path(root).iterdir()):
        text = (folder / "orchestrator.yaml").read_text(encoding="utf-8")
        try:
            yaml.safe_load(text)
            verdicts[folder.name] = None
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark
            verdicts[folder.name] = [mark.line + 1, mark.column + 1, e.problem]
        except yaml.YAMLError as e:
            verdicts[folder.name] = [None, None, str(e)]
    print(json.dumps(verdicts))


def judged_findings(mzk, python, script, out, what, keep, log):
    """Judges the folders under `out` with `script judge` in the reference
    interpreter, then checks them with mzk: (the verdicts, mzk's findings that
    `keep` accepts by folder), or None after logging why not."""
    result = subprocess.run([str(python), str(script), "judge", str(out)], capture_output=True, text=True)
    if result.returncode != 0:
        log(f"error: judging {what} failed:\n{result.stderr}")
        return None
    verdicts = json.loads(result.stdout)
    result = subprocess.run([str(mzk), "check", ".", "--output-format", "json"], cwd=out, capture_output=True, text=True)
    found = {}
    for d in json.loads(result.stdout)["diagnostics"]:
        if keep(d):
            found.setdefault(d["path"].split("/")[0], []).append(d)
    return verdicts, found


def check(mzk, python, corpus, work, count, seed, log):
    """Returns the number of failures (0 or 1), after printing the table."""
    out = work / "syntax"
    cases = make(corpus, out, count, seed)
    judged = judged_findings(
        mzk, python, __file__, out, "syntax mutants",
        lambda d: d["code"].startswith("MZ00") and d["severity"] == "error", log,
    )
    if judged is None:
        return 1
    verdicts, found = judged
    rejected = same_place = 0
    problems = []
    for case in cases:
        verdict, errors = verdicts[case["folder"]], found.get(case["folder"], [])
        text = (out / case["folder"] / "orchestrator.yaml").read_text(encoding="utf-8")
        if verdict is None:
            false = [d for d in errors if d["code"] == "MZ001"]
            lines = text.splitlines()
            if false and not any(
                ANCHOR_BEFORE_COLON.search(lines[d["range"]["start"]["line"] - 1] if d["range"]["start"]["line"] <= len(lines) else "")
                for d in false
            ):
                problems.append(f"FALSE ERROR {case}: {false[0]['message'][:160]}")
            continue
        rejected += 1
        if not errors:
            problems.append(f"MISSED {case}: PyYAML says {verdict}")
            continue
        first = min((d["range"]["start"]["line"], d["range"]["start"]["column"]) for d in errors)
        if verdict[0] is None or list(first) == verdict[:2]:
            same_place += 1
        else:
            log(f"  elsewhere: {case['source']} edit {case['edit']} at {case['offset']}: PyYAML {verdict[0]}:{verdict[1]} ({verdict[2]}), mzk {first[0]}:{first[1]}")
    share = same_place / rejected if rejected else 1.0
    log(f"\nsyntax: {len(cases)} one-character edits of the real bundles' YAML; PyYAML rejects {rejected}; "
        f"mzk reports an error for {rejected - sum(p.startswith('MISSED') for p in problems)}, "
        f"at PyYAML's line and column for {same_place} ({share:.1%}, at least {MIN_POSITION_AGREEMENT:.0%} required); "
        f"false errors on accepted texts: {sum(p.startswith('FALSE') for p in problems)}")
    for p in problems:
        log(f"  {p}")
    return int(bool(problems) or share < MIN_POSITION_AGREEMENT)


if __name__ == "__main__" and sys.argv[1:2] == ["judge"]:
    judge(sys.argv[2])
