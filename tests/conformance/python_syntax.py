"""Python syntax errors where and as CPython reports them (MZ504).

1. Seeded small edits (a bracket, a quote, a colon, an indent, a line break,
   a keyword …) of every Python module of the real bundles, each bound as a
   tool module of its own bundle. The reference's interpreter judges each
   edited text twice: `ast.parse` (CPython's parser) and `compile` (parser
   and compiler). Where the parser rejects, mzk must report MZ504, on the
   parser's line for at least MIN_LINE_AGREEMENT of them; where `compile`
   accepts, mzk must report nothing. Errors only the compiler raises are
   counted apart: mzk reports most kinds, not all (docs/rules/MZ504.md).
2. SNIPPETS, one per compiler error mzk reports and a lookalike CPython
   accepts beside each: mzk must agree with `compile` on every one.

Run by run.py with the reference's interpreter: the judging half runs there
(`python python_syntax.py judge DIR`), the rest here.
"""
import json
import random
import shutil
import sys
from pathlib import Path

import syntax

EDITS = ["(", ")", "[", "]", "{", "}", ":", "'", '"', ",", "=", " ", "    ", "\n", ".", "*", "@", "\\",
         "+", "!", ";", "`", "#", "\t", "f", "b", "lambda ", "def ", "return ", "yield ", "await ", "else:",
         "async ", "not ", "is ", "in ", ":=", "->", "**", "/"]
MIN_LINE_AGREEMENT = 0.9
# (source, note) — the CPython 3.11 compile verdict is the expectation.
SNIPPETS = [
    # Rejected by the compiler only.
    ("return 1\n", "return outside function"),
    ("class C:\n    return 1\n", "return in class body"),
    ("yield 1\n", "yield outside function"),
    ("class C:\n    x = yield 1\n", "yield in class body"),
    ("def f():\n    return [(yield x) for x in y]\n", "yield in comprehension"),
    ("await x\n", "await at module level"),
    ("def f():\n    await x\n", "await in a sync function"),
    ("async def f():\n    g = lambda: await x\n", "await in a lambda"),
    ("def f():\n    return [await x for x in y]\n", "await in a sync comprehension"),
    ("def f():\n    return (x for x in await y)\n", "await in the first iterable of a generator"),
    ("break\n", "break outside loop"),
    ("for x in y:\n    pass\nelse:\n    break\n", "break in a loop's else"),
    ("while x:\n    def f():\n        continue\n", "continue in a function inside a loop"),
    ("nonlocal x\n", "nonlocal at module level"),
    ("def f():\n    from os import *\n", "import * in a function"),
    ("def f(a, a):\n    pass\n", "duplicate parameter"),
    ("lambda a, a: 1\n", "duplicate lambda parameter"),
    ("f(a=1, a=2)\n", "repeated keyword argument"),
    ("*a = [1]\n", "starred target alone"),
    ("a, *b, *c = x\n", "two starred targets"),
    ("def f():\n    return *x\n", "starred return"),
    ("__debug__ = 1\n", "assignment to __debug__"),
    ("def f():\n    x = 1\n    global x\n", "use before global"),
    ("def f():\n    global x\n    x: int = 1\n", "annotated global"),
    ("def f(x):\n    global x\n", "parameter and global"),
    ("import os\nfrom __future__ import annotations\n", "late __future__ import"),
    ("from __future__ import braces\n", "unknown __future__ feature"),
    ("match x:\n    case y:\n        pass\n    case 1:\n        pass\n", "irrefutable case not last"),
    ("match x:\n    case [a, a]:\n        pass\n", "name bound twice in a pattern"),
    ("match x:\n    case [*a, *b]:\n        pass\n", "two starred names in a pattern"),
    ("match x:\n    case {'a': 1, 'a': 2}:\n        pass\n", "duplicate mapping key"),
    ("match x:\n    case C(a=1, a=2):\n        pass\n", "duplicate class attribute"),
    ("match x:\n    case [a] | [b]:\n        pass\n", "alternatives bind different names"),
    ("[(i := 0) for i in range(3)]\n", "comprehension variable rebound"),
    ("[x for x in (y := [1])]\n", "walrus in a comprehension iterable"),
    ("class C:\n    z = [(y := x) for x in range(3)]\n", "walrus in a class-body comprehension"),
    ("async def f():\n    yield from x\n", "yield from in async function"),
    ("async def f():\n    yield 1\n    return 2\n", "return with value in async generator"),
    # Accepted: lookalikes of the above.
    ("def f():\n    return 1\n", "return in a function"),
    ("def f():\n    yield 1\n    return 2\n", "return in a sync generator"),
    ("def f():\n    return (await x for x in y)\n", "await in a generator's element"),
    ("def f():\n    return (x for x in y if await x)\n", "await in a generator's condition"),
    ("async def f():\n    return [await x for x in y]\n", "await in an async function's comprehension"),
    ("async def f():\n    return [x async for x in y]\n", "async comprehension in an async function"),
    ("g = (await x for x in y)\n", "await in a module-level generator"),
    ("lambda: (yield)\n", "yield in a lambda"),
    ("for x in y:\n    try:\n        pass\n    finally:\n        continue\n", "continue in finally"),
    ("while x:\n    if y:\n        break\nelse:\n    pass\n", "break in a loop"),
    ("def f(a, b=1, *c, d, **e):\n    pass\n", "parameters"),
    ("def f(x=await y):\n    pass\n", "await in a default at module level is refused? (judged)"),
    ("async def g():\n    def f(x=await y):\n        pass\n", "await in a default inside async def"),
    ("x = 1\nglobal x\n", "global after use at module level (judged)"),
    ("def f():\n    global x\n    x = 1\n", "global before use"),
    ("def f():\n    def g():\n        nonlocal x\n    x = 1\n", "nonlocal bound later in the enclosing function"),
    ("from __future__ import annotations\nimport os\n", "__future__ import first"),
    ('"""Doc."""\nfrom __future__ import annotations\n', "__future__ import after the docstring"),
    ("match x:\n    case 1:\n        pass\n    case y:\n        pass\n", "irrefutable case last"),
    ("match x:\n    case [a] | [a]:\n        pass\n", "alternatives bind the same names"),
    ("a, *b = x\n", "one starred target"),
    ("[i for i in range(3) if (j := i)]\n", "walrus in a comprehension condition"),
    ("class C:\n    z = [x for x in range(3)]\n", "comprehension in a class body"),
    ("del x\n", "del"),
    ("def f():\n    x: int\n    global y\n", "annotation and an unrelated global"),
]
# Rejected by CPython, not reported by mzk (docs/rules/MZ504.md).
KNOWN_MISSES = [
    ("def f(x):\n    def g():\n        nonlocal x\n        global x\n", "nonlocal and global"),
    ("def f():\n    nonlocal x\n", "nonlocal without a binding"),
    ("class C:\n    nonlocal x\n", "nonlocal in a module-level class"),
]
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
    for i, (source, note) in enumerate(SNIPPETS + KNOWN_MISSES):
        folder = out / f"s{i:04d}"
        shutil.copytree(TEMPLATE, folder)
        (folder / "tools" / "tickets.py").write_text(source, encoding="utf-8")
        cases.append({"folder": folder.name, "snippet": note, "known_miss": i >= len(SNIPPETS)})
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
    edits = sum("snippet" not in c for c in cases)
    judged = syntax.judged_findings(
        mzk, python, __file__, out, "Python syntax mutants", lambda d: d["code"] == "MZ504", log
    )
    if judged is None:
        return 1
    verdicts, found = judged
    rejected = same_line = compiler_only = compiler_only_found = snippets = 0
    problems = []
    for case in cases:
        (parser, compiler), errors = verdicts[case["folder"]], found.get(case["folder"], [])
        if "snippet" in case:
            if case["known_miss"]:
                if compiler is None:
                    problems.append(f"KNOWN MISS NOW ACCEPTED {case['snippet']!r}: remove it from KNOWN_MISSES")
                continue
            snippets += 1
            if (compiler is None) != (not errors):
                said = errors[0]["message"][:120] if errors else "nothing"
                problems.append(f"SNIPPET {case['snippet']!r}: CPython says {compiler}, mzk {said}")
            continue
        where = f"{case['source']} {case['kind']} {case['edit']} at {case['offset']}"
        if parser is None:
            if compiler is not None:
                compiler_only += 1
                compiler_only_found += bool(errors)
                if not errors:
                    log(f"  compiler only, not reported: {where}: CPython line {compiler[0]}: {compiler[1]}")
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
    log(f"\npython syntax: {edits} small edits of the real bundles' Python; CPython's parser rejects {rejected}; "
        f"mzk reports MZ504 for {rejected - sum(p.startswith('MISSED') for p in problems)}, "
        f"on CPython's line for {same_line} ({share:.1%}, at least {MIN_LINE_AGREEMENT:.0%} required); "
        f"false errors on accepted modules: {sum(p.startswith('FALSE') for p in problems)}; "
        f"refused only by CPython's compiler: {compiler_only}, of which mzk reports {compiler_only_found}; "
        f"compiler snippets agreeing with CPython: {snippets - sum(p.startswith('SNIPPET') for p in problems)}/{snippets}")
    for p in problems:
        log(f"  {p}")
    return int(bool(problems) or share < MIN_LINE_AGREEMENT)


if __name__ == "__main__" and sys.argv[1:2] == ["judge"]:
    judge(sys.argv[2])
