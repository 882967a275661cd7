"""Python syntax errors where and as CPython reports them (MZ504).

Seeded small edits (a bracket, a quote, a colon, an indent, a line break, a
keyword …) of every Python module of the real bundles, each bound as a tool
module of its own bundle. The reference's interpreter judges each edited
text twice: `ast.parse` (CPython's parser) and `compile` (parser and
compiler). mzk must agree with the parser on every verdict (it rejects ->
MZ504; it accepts -> no MZ504), and report its error on the parser's line for
at least MIN_LINE_AGREEMENT of the rejected texts. Errors only the compiler
raises (`return` outside a function, a starred assignment target alone …)
are not MZ504's (docs/rules/MZ504.md) and are counted apart.

Run by run.py with the reference's interpreter: the judging half runs there
(`python python_syntax.py judge DIR`), the rest here.
"""
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

EDITS = ["(", ")", "[", "]", "{", "}", ":", "'", '"', ",", "=", " ", "    ", "\n", ".", "*", "@", "\\",
         "+", "!", ";", "`", "#", "\t", "f", "b", "lambda ", "def ", "return ", "yield ", "await ", "else:",
         "async ", "not ", "is ", "in ", ":=", "->", "**", "/"]
MIN_LINE_AGREEMENT = 0.9
# The bundle each edited module is bound from: the MZ504 fixture, which
# binds tools/tickets.py.
TEMPLATE = Path(__file__).resolve().parent.parent / "fixtures" / "rules" / "MZ504"


def make(corpus, out, count, seed):
    rnd = random.Random(seed)
    files = sorted(p for p in Path(corpus).rglob("*.py") if 0 < p.stat().st_size < 200_000)
    cases = []
    for i in range(count):
        path = rnd.choice(files)
        text = path.read_text(encoding="utf-8")
        pos = rnd.randrange(len(text))
        kind = rnd.random()
        edit = rnd.choice(EDITS)
        if kind < 0.6:
            new = text[:pos] + edit + text[pos:]
        elif kind < 0.8:
            new = text[:pos] + text[pos + 1:]
        else:
            new = text[:pos] + edit + text[pos + 1:]
        folder = out / f"p{i:04d}"
        shutil.copytree(TEMPLATE, folder)
        (folder / "tools" / "tickets.py").write_text(new, encoding="utf-8")
        cases.append({"folder": folder.name, "source": str(path.relative_to(corpus)), "offset": pos,
                      "kind": "insert" if kind < 0.6 else "delete" if kind < 0.8 else "replace", "edit": repr(edit)})
    return cases


def judge(root):
    """Prints {folder: [parser verdict, compiler verdict]}, each null or
    [line, problem], as CPython sees each module."""
    import ast

    verdicts = {}
    for folder in sorted(Path(root).iterdir()):
        source = (folder / "tools" / "tickets.py").read_bytes()
        seen = []
        for stage in (ast.parse, lambda s: compile(s, "tickets.py", "exec")):
            try:
                stage(source)
                seen.append(None)
            except SyntaxError as e:  # IndentationError and TabError too
                seen.append([e.lineno, f"{type(e).__name__}: {e.msg}"])
            except (ValueError, RecursionError, MemoryError) as e:
                seen.append([None, f"{type(e).__name__}: {e}"])
        verdicts[folder.name] = seen
    print(json.dumps(verdicts))


def check(mzk, python, corpus, work, count, seed, log):
    """Returns the number of failures (0 or 1), after printing the table."""
    out = work / "python_syntax"
    cases = make(corpus, out, count, seed)
    result = subprocess.run([str(python), __file__, "judge", str(out)], capture_output=True, text=True)
    if result.returncode != 0:
        log(f"error: judging Python syntax mutants failed:\n{result.stderr}")
        return 1
    verdicts = json.loads(result.stdout)
    result = subprocess.run([str(mzk), "check", ".", "--output-format", "json"], cwd=out, capture_output=True, text=True)
    found = {}
    for d in json.loads(result.stdout)["diagnostics"]:
        if d["code"] == "MZ504":
            found.setdefault(d["path"].split("/")[0], []).append(d)
    rejected = same_line = compiler_only = compiler_only_found = 0
    problems = []
    for case in cases:
        (parser, compiler), errors = verdicts[case["folder"]], found.get(case["folder"], [])
        where = f"{case['source']} {case['kind']} {case['edit']} at {case['offset']}"
        if parser is None:
            if compiler is not None:
                compiler_only += 1
                compiler_only_found += bool(errors)
            elif errors:
                problems.append(f"FALSE ERROR {where}: {errors[0]['message'][:160]}")
            continue
        rejected += 1
        if not errors:
            problems.append(f"MISSED {where}: CPython says line {parser[0]}: {parser[1]}")
            continue
        line = errors[0]["range"]["start"]["line"]
        if parser[0] is None or line == parser[0]:
            same_line += 1
        else:
            log(f"  elsewhere: {where}: CPython line {parser[0]} ({parser[1]}), mzk line {line} ({errors[0]['message'][:100]})")
    share = same_line / rejected if rejected else 1.0
    log(f"\npython syntax: {len(cases)} small edits of the real bundles' Python; CPython's parser rejects {rejected}; "
        f"mzk reports MZ504 for {rejected - sum(p.startswith('MISSED') for p in problems)}, "
        f"on CPython's line for {same_line} ({share:.1%}, at least {MIN_LINE_AGREEMENT:.0%} required); "
        f"false errors on accepted modules: {sum(p.startswith('FALSE') for p in problems)}; "
        f"refused only by CPython's compiler (not MZ504's): {compiler_only}, of which mzk reports {compiler_only_found}")
    for p in problems:
        log(f"  {p}")
    return int(bool(problems) or share < MIN_LINE_AGREEMENT)


if __name__ == "__main__" and sys.argv[1:2] == ["judge"]:
    judge(sys.argv[2])
