"""Every fix mzk offers on the real bundles, safe and unsafe, applied in a
scratch copy: the bundle must still load in mozaiks 0.2.0 and mzk must find
no error in it. Each fix is applied alone (from the edits `--output-format
json` lists), then all of them together with `mzk check --fix
--unsafe-fixes`, so advice that would break a bundle fails the test command.
"""

import shutil
import subprocess
import tempfile
from pathlib import Path


def offset(text, line, column):
    """The string index of a 1-based line and column (columns count Unicode
    characters, as the JSON output does); one past the last line is the end."""
    lines = text.splitlines(keepends=True)
    if line > len(lines):
        return len(text)
    return sum(len(l) for l in lines[: line - 1]) + column - 1


def apply_edits(root, edits):
    """Applies one fix's edits (paths relative to `root`), last first in
    each file so earlier positions stay true."""
    by_path = {}
    for edit in edits:
        by_path.setdefault(edit["path"], []).append(edit)
    for relative, file_edits in by_path.items():
        path = root / relative
        text = path.read_text(encoding="utf-8")
        spans = []
        for e in file_edits:
            start = offset(text, e["range"]["start"]["line"], e["range"]["start"]["column"])
            end = offset(text, e["range"]["end"]["line"], e["range"]["end"]["column"])
            spans.append((start, end, e["new_text"]))
        for start, end, new_text in sorted(spans, reverse=True):
            text = text[:start] + new_text + text[end:]
        path.write_text(text, encoding="utf-8")


def scratch_root(corpus, bundles):
    """A workflows root holding copies of `bundles` and of `_shared` (tools
    import from it, and mzk reads what it mentions)."""
    root = Path(tempfile.mkdtemp(prefix="mzk-real-fixes-"))
    for name in ["_shared", *bundles]:
        shutil.copytree(corpus / name, root / name)
    init = corpus / "__init__.py"
    if init.is_file():
        shutil.copy(init, root / "__init__.py")
    return root


def check(mzk, python, corpus, found, reference_verdicts, mzk_diagnostics, log):
    """Returns the number of failures (a fix that leaves a bundle the
    reference refuses, or with an mzk error)."""
    offered = [
        (folder, d, fix)
        for folder, diagnostics in sorted(found.items())
        for d in diagnostics
        for fix in d.get("fixes", [])
    ]
    not_applied = 0
    judged = []
    for i, (folder, d, fix) in enumerate(offered):
        root = scratch_root(corpus, [folder])
        try:
            apply_edits(root, fix["edits"])
            judged.append((f"{d['code']} {d['path']}: {fix['title']} ({fix['applicability']})",
                           root, [folder], (d["code"], d["message"])))
        except (OSError, ValueError) as error:
            not_applied += 1
            log(f"  FIX NOT APPLICABLE: {d['code']} {d['path']}: {fix['title']}: {error}")
            shutil.rmtree(root, ignore_errors=True)
    # All of them together, as `mzk check --fix --unsafe-fixes` writes them.
    every = sorted({folder for folder, _, _ in offered})
    together = scratch_root(corpus, every)
    result = subprocess.run(
        [str(mzk), "check", "--fix", "--unsafe-fixes", "--output-format", "concise", "."],
        cwd=together, capture_output=True, text=True)
    report = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "no report"
    judged.append((f"`mzk check --fix --unsafe-fixes` ({report})", together, every, None))
    broken = 0
    for label, root, folders, fixed in judged:
        verdicts = reference_verdicts(python, root, folders)
        after = [d for f in folders for d in mzk_diagnostics(mzk, root).get(f, [])]
        errors = [d for d in after if d["severity"] == "error"]
        refused = [f for f in folders if not verdicts[f]["valid"]]
        # The fix does what it says: its finding is gone.
        remains = fixed is not None and any((d["code"], d["message"]) == fixed for d in after)
        status = "ok" if not refused and not errors and not remains else "FAIL"
        log(f"  {status:4} {label}")
        if status == "FAIL":
            broken += 1
            for f in refused:
                log(f"       mozaiks refuses {f}: {verdicts[f]['errors'][0][:300]}")
            if remains:
                log("       the finding it fixes is still reported")
            for d in errors:
                log(f"       mzk: {d['path']}:{d['range']['start']['line']}: [{d['code']}] {d['message'][:200]}")
        shutil.rmtree(root, ignore_errors=True)
    log(f"real fixes: {len(offered)} offered on the real bundles, each applied alone and all together: "
        f"{len(judged) - broken} of {len(judged)} leave the bundles loadable and free of mzk errors")
    return not_applied + broken
