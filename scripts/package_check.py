#!/usr/bin/env python3
"""The packaging check of scripts/test.sh: mzk installed the way its users
install it, with no Rust toolchain in sight.

Run after `cargo test` (it reuses that build's compiled dependencies):

  1. tools      a venv with maturin, check-jsonschema, pre-commit, auditwheel
                (pinned in scripts/package-tools.txt)
  2. schemas    action.yml and every workflow against the GitHub schemas that
                check-jsonschema vendors (offline); both pre-commit hook
                manifests; one version (Cargo's) in every manifest
  3. wheel      the wheel for this platform (`maturin build --profile dev`),
                its metadata and contents, auditwheel's verdict on its tag
  4. venv       the wheel installed into a fresh venv; from that venv alone
                (no cargo or rustc on PATH): mzk --version, mzk check bundles,
                python -m mzk (arguments, output, exit status, signals),
                mzk.find_mzk_bin(), an `mzk lsp` initialize/shutdown handshake
  5. vsix       the linux-x64 .vsix around the built binary: the packaged
                server runs --version and answers initialize
  6. pre-commit a real `pre-commit run --all-files` in a scratch repository,
                hooks from local repositories, the wheel found offline: a
                clean bundle passes, a broken one fails with mzk's message
  7. sdist      what the source distribution holds, and that cargo resolves
                its workspace

Any stage that cannot get what it needs fails the check (never skips).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()
WORK = TARGET / "package-check"
BIN = "Scripts" if os.name == "nt" else "bin"
EXE = ".exe" if os.name == "nt" else ""
FLIT_CORE = "flit_core==4.2.0"  # the hook package's build backend (pre-commit/pyproject.toml)

timings: list[tuple[str, float]] = []
measures: dict[str, str] = {}


class CheckFailed(Exception):
    pass


def fail(message: str) -> None:
    raise CheckFailed(message)


def run(cmd, *, cwd=ROOT, env=None, check=True, timeout=600, input=None) -> subprocess.CompletedProcess:
    shown = " ".join(str(c) for c in cmd)
    try:
        done = subprocess.run(
            [str(c) for c in cmd],
            cwd=cwd,
            env=env,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except FileNotFoundError as error:
        fail(f"`{shown}`: {error}")
    except subprocess.TimeoutExpired:
        fail(f"`{shown}` took longer than {timeout} s")
    if check and done.returncode != 0:
        fail(f"`{shown}` exited with {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")
    return done


class stage:
    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        print(f"-- package: {self.name}", flush=True)
        self.start = time.monotonic()

    def __exit__(self, kind, value, tb):
        elapsed = time.monotonic() - self.start
        timings.append((self.name, elapsed))
        if kind is None:
            print(f"   ok ({elapsed:.1f} s)", flush=True)


def cargo_version() -> str:
    text = (ROOT / "Cargo.toml").read_text()
    match = re.search(r"^\[workspace\.package\][^\[]*?^version\s*=\s*\"([^\"]+)\"", text, re.M | re.S)
    if not match:
        fail("no version in [workspace.package] of Cargo.toml")
    return match.group(1)


def human(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


# -- 1 ---------------------------------------------------------------------


def tools() -> Path:
    venv = WORK / "tools"
    python = venv / BIN / f"python{EXE}"
    if not python.exists():
        run([sys.executable, "-m", "venv", venv])
    run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", ROOT / "scripts/package-tools.txt"])
    return venv / BIN


# -- 2 ---------------------------------------------------------------------


def schemas(tool_bin: Path, version: str) -> None:
    workflows = sorted((ROOT / ".github/workflows").glob("*.y*ml"))
    for needed in ("ci.yml", "release.yml"):
        if not any(w.name == needed for w in workflows):
            fail(f".github/workflows/{needed} is missing")
    jsonschema = tool_bin / f"check-jsonschema{EXE}"
    run([jsonschema, "--builtin-schema", "vendor.github-actions", ROOT / "action.yml"])
    run([jsonschema, "--builtin-schema", "vendor.github-workflows", *workflows])
    print(f"   action.yml and {len(workflows)} workflows match the vendored GitHub schemas")

    hooks_main = ROOT / ".pre-commit-hooks.yaml"
    hooks_mirror = ROOT / "pre-commit/.pre-commit-hooks.yaml"
    run([tool_bin / f"pre-commit{EXE}", "validate-manifest", hooks_main, hooks_mirror])

    def body(path: Path) -> str:
        return "\n".join(line for line in path.read_text().splitlines() if not line.startswith("#"))

    if body(hooks_main) != body(hooks_mirror):
        fail(f"{hooks_main} and {hooks_mirror} define different hooks: keep them identical (comments aside)")

    hook_project = (ROOT / "pre-commit/pyproject.toml").read_text()
    pins = {
        "pre-commit/pyproject.toml version": re.search(r'^version = "([^"]+)"', hook_project, re.M),
        "pre-commit/pyproject.toml dependency mzk==": re.search(r'"mzk==([^"]+)"', hook_project),
    }
    manifest = json.loads((ROOT / "editors/vscode/package.json").read_text())
    found = {name: (m.group(1) if m else None) for name, m in pins.items()}
    found["editors/vscode/package.json version"] = manifest.get("version")
    wrong = {name: v for name, v in found.items() if v != version}
    if wrong:
        fail(f"Cargo's version is {version}, but {wrong}: set them to {version} (one version everywhere)")
    print(f"   one version everywhere: {version}")


# -- 3 ---------------------------------------------------------------------


def wheel(tool_bin: Path, version: str) -> Path:
    out = WORK / "wheels"
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET))
    env.setdefault("CARGO_BUILD_JOBS", "2")
    # The dev profile reuses what `cargo test` compiled (only the crates whose
    # features differ without the test-only dependencies are compiled again);
    # the release profile (dist) is the release workflow's job.
    run([tool_bin / f"maturin{EXE}", "build", "--profile", "dev", "--strip", "--out", out], env=env, timeout=1200)
    wheels = sorted(out.glob("mzk-*.whl"))
    if len(wheels) != 1:
        fail(f"expected one wheel in {out}, found {[w.name for w in wheels]}")
    built = wheels[0]
    tag = re.fullmatch(rf"mzk-{re.escape(version)}-py3-none-(.+)\.whl", built.name)
    if not tag:
        fail(f"the wheel {built.name} is not mzk {version} for py3-none-PLATFORM")
    platform_tag = tag.group(1)
    if sys.platform.startswith("linux") and not re.match(r"(many|musl)linux_\d+_\d+_", platform_tag):
        fail(f"the Linux wheel's tag {platform_tag} is not a manylinux or musllinux tag")

    names = set(zipfile.ZipFile(built).namelist())
    data = f"mzk-{version}.data/scripts/mzk{EXE}"
    dist_info = f"mzk-{version}.dist-info"
    for needed in (
        data,
        "mzk/__init__.py",
        "mzk/__main__.py",
        "mzk/_find.py",
        "mzk/py.typed",
        f"{dist_info}/METADATA",
        f"{dist_info}/licenses/LICENSE-MIT",
        f"{dist_info}/licenses/LICENSE-APACHE",
    ):
        if needed not in names:
            fail(f"{needed} is missing from {built.name}: {sorted(names)}")
    metadata = zipfile.ZipFile(built).read(f"{dist_info}/METADATA").decode()
    for field in (
        f"Version: {version}",
        "Requires-Python: >=3.9",
        "License-Expression: MIT OR Apache-2.0",
        "Project-URL: Repository",
        "Project-URL: Documentation",
        "Classifier: Programming Language :: Rust",
        "Summary: ",
        "Description-Content-Type: text/markdown",
        "pip install mzk",  # the readme is the description
    ):
        if field not in metadata:
            fail(f"the wheel's METADATA lacks {field!r} (pyproject.toml [project])")

    if sys.platform.startswith("linux"):
        shown = run([tool_bin / f"auditwheel{EXE}", "show", built]).stdout
        flat = " ".join(shown.split())
        if f'consistent with the following platform tag: "{platform_tag}"' not in flat:
            fail(f"auditwheel does not find {built.name} consistent with its own tag {platform_tag}:\n{shown}")
        if "following external shared libraries" in flat and "system-provided" not in flat:
            fail(f"the wheel needs shared libraries outside the manylinux policy:\n{shown}")
        print(f"   auditwheel: consistent with {platform_tag}")
    measures["wheel (dev profile, this platform)"] = f"{built.name}, {human(built.stat().st_size)}"
    return built


# -- 4 ---------------------------------------------------------------------


def without_rust(extra_bin: Path | None = None) -> dict:
    """An environment whose PATH holds no cargo, rustc or rustup."""
    keep = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and not any(
            (Path(folder) / f"{tool}{EXE}").exists() for tool in ("cargo", "rustc", "rustup")
        ):
            keep.append(folder)
    if extra_bin:
        keep.insert(0, str(extra_bin))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARGO", "RUSTUP", "RUSTC", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(keep)
    for tool in ("cargo", "rustc", "rustup"):
        if shutil.which(tool, path=env["PATH"]):
            fail(f"{tool} is still on the PATH of the no-Rust step: {shutil.which(tool, path=env['PATH'])}")
    return env


def lsp_handshake(cmd: list, env: dict, root: Path) -> dict:
    """initialize, initialized, shutdown, exit; returns the initialize result."""
    process = subprocess.Popen(
        [str(c) for c in cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )

    def send(message: dict) -> None:
        body = json.dumps(message).encode()
        process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        process.stdin.flush()

    def receive(wanted_id: int) -> dict:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            length = None
            while True:
                line = process.stdout.readline()
                if not line:
                    fail(f"`{' '.join(map(str, cmd))}` closed its output: {process.stderr.read().decode()}")
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(process.stdout.read(length))
            if message.get("id") == wanted_id and "method" not in message:
                return message
            if "method" in message and "id" in message:  # a request of the server's: answer it
                send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        fail(f"no answer to request {wanted_id} from `{' '.join(map(str, cmd))}` within 60 s")

    try:
        send({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}},
        })
        answer = receive(1)
        if "result" not in answer:
            fail(f"initialize failed: {answer}")
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        if "error" in receive(2):
            fail("shutdown answered with an error")
        send({"jsonrpc": "2.0", "method": "exit"})
        process.stdin.close()
        status = process.wait(timeout=30)
        if status != 0:
            fail(f"the server exited with {status} after shutdown and exit")
        return answer["result"]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def broken_bundle(into: Path) -> Path:
    """A copy of bundles/Hello with an unknown key (MZ101)."""
    bundle = into / "Hello"
    shutil.copytree(ROOT / "bundles/Hello", bundle)
    orchestrator = bundle / "orchestrator.yaml"
    text = orchestrator.read_text()
    if "\nmax_turns:" not in text:
        fail("bundles/Hello/orchestrator.yaml has no max_turns key to misspell: update broken_bundle()")
    orchestrator.write_text(text.replace("\nmax_turns:", "\nmax_turnz:"))
    return bundle


def venv_checks(built: Path, version: str) -> Path:
    venv = WORK / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", venv])
    python = venv / BIN / f"python{EXE}"
    started = time.monotonic()
    run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index", built])
    installed_in = time.monotonic() - started

    env = without_rust(venv / BIN)
    mzk = shutil.which("mzk", path=env["PATH"])
    if not mzk or Path(mzk).parent != venv / BIN:
        fail(f"the wheel did not put mzk on the venv's PATH (found {mzk})")

    shown = run(["mzk", "--version"], env=env).stdout.strip()
    if not re.fullmatch(rf"mzk {re.escape(version)}( \([0-9a-f]{{7,}} \d{{4}}-\d\d-\d\d\))?", shown):
        fail(f"`mzk --version` printed {shown!r}; expected `mzk {version}` (plus the commit in a checkout)")
    api = run(
        [python, "-c", "import mzk, json; print(json.dumps([mzk.find_mzk_bin(), mzk.__version__]))"], env=env
    ).stdout
    found, package_version = json.loads(api)
    if Path(found) != (venv / BIN / f"mzk{EXE}").resolve() or package_version != version:
        fail(f"mzk.find_mzk_bin(), mzk.__version__ = {found}, {package_version}; expected the venv's mzk, {version}")

    started = time.monotonic()
    direct = run(["mzk", "check", "bundles"], env=env)
    first_check = time.monotonic() - started
    module = run([python, "-m", "mzk", "check", "bundles"], env=env)
    if (direct.stdout, direct.stderr) != (module.stdout, module.stderr):
        fail(f"`python -m mzk check bundles` printed differently from `mzk check bundles`:\n{module}\n{direct}")

    scratch = WORK / "broken"
    shutil.rmtree(scratch, ignore_errors=True)
    bundle = broken_bundle(scratch)
    args = ["check", "--output-format", "concise", "--no-color", bundle]
    direct = run(["mzk", *args], env=env, check=False)
    module = run([python, "-m", "mzk", *args], env=env, check=False)
    if direct.returncode != 1 or "MZ101" not in direct.stdout or "max_turnz" not in direct.stdout:
        fail(f"mzk check on a broken bundle: expected exit 1 and MZ101 for max_turnz, got {direct}")
    if (module.returncode, module.stdout) != (direct.returncode, direct.stdout):
        fail(f"python -m mzk differs from mzk on a broken bundle:\n{module}\n{direct}")
    usage = run([python, "-m", "mzk", "check", scratch / "nowhere"], env=env, check=False)
    if usage.returncode != 2:
        fail(f"python -m mzk on a missing path: expected exit 2 (usage error), got {usage.returncode}")

    # python -m mzk becomes mzk (exec): the same process gets the signals.
    if os.name == "posix":
        process = subprocess.Popen(
            [str(python), "-m", "mzk", "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        try:
            deadline = time.monotonic() + 20
            exe = ""
            while time.monotonic() < deadline:
                exe = os.path.realpath(f"/proc/{process.pid}/exe")
                if Path(exe) == Path(mzk).resolve():
                    break
                time.sleep(0.05)
            else:
                fail(f"python -m mzk lsp did not become the mzk binary (its process runs {exe})")
            process.send_signal(signal.SIGTERM)
            status = process.wait(timeout=20)
            if status != -signal.SIGTERM:
                fail(f"SIGTERM to `python -m mzk lsp` ended it with {status}, not by the signal")
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    result = lsp_handshake(["mzk", "lsp"], env, ROOT / "bundles")
    if result.get("serverInfo", {}).get("name") != "mzk" or result["serverInfo"].get("version") != shown[4:]:
        fail(f"initialize's serverInfo is {result.get('serverInfo')}; expected mzk {shown[4:]}")
    measures["pip install of the wheel (local file, fresh venv)"] = f"{installed_in:.1f} s"
    measures["first mzk check bundles (dev build)"] = f"{first_check:.2f} s"
    print(f"   {shown}; check, python -m mzk, find_mzk_bin, signals and the lsp handshake ok without Rust on PATH")
    return venv / BIN / f"mzk{EXE}"


# -- 5 ---------------------------------------------------------------------


def vsix(binary: Path, version: str) -> None:
    extension = ROOT / "editors/vscode"
    if not (extension / "dist/extension.js").exists():
        fail("editors/vscode/dist/extension.js is missing: scripts/test.sh builds the extension before this check")
    out = extension / "dist/mzk-linux-x64.vsix"
    out.unlink(missing_ok=True)
    run(["node", "package-target.mjs", "--target", "linux-x64", "--binary", binary, "--out", out], cwd=extension)
    package = zipfile.ZipFile(out)
    names = package.namelist()
    entry = "extension/bundled/mzk"
    if entry not in names:
        fail(f"{entry} is missing from {out.name}: {names}")
    mode = package.getinfo(entry).external_attr >> 16
    if mode & 0o111 == 0:
        fail(f"{entry} is not executable in {out.name} (mode {oct(mode)})")
    manifest = package.read("extension.vsixmanifest").decode()
    if 'TargetPlatform="linux-x64"' not in manifest:
        fail(f"{out.name} is not marked for linux-x64:\n{manifest}")
    if json.loads(package.read("extension/package.json"))["version"] != version:
        fail(f"{out.name} is not version {version}")
    unpacked = WORK / "vsix"
    shutil.rmtree(unpacked, ignore_errors=True)
    package.extractall(unpacked)
    server = unpacked / entry
    server.chmod(mode & 0o777)
    env = without_rust()
    shown = run([server, "--version"], env=env).stdout.strip()
    if not shown.startswith(f"mzk {version}"):
        fail(f"the packaged server's --version printed {shown!r}")
    result = lsp_handshake([server, "lsp"], env, ROOT / "bundles")
    if result.get("serverInfo", {}).get("name") != "mzk":
        fail(f"the packaged server's initialize result has no mzk serverInfo: {result}")
    measures["linux-x64 .vsix (dev binary)"] = human(out.stat().st_size)
    plain = extension / "dist/mzk.vsix"
    if plain.exists():
        measures["platform-neutral .vsix (no binary)"] = human(plain.stat().st_size)
    print(f"   {out.relative_to(ROOT)}: bundled/mzk runs ({shown}) and answers initialize")


# -- 6 ---------------------------------------------------------------------


def git(*args, cwd: Path, env: dict) -> str:
    return run(
        ["git", "-c", "user.name=mzk package check", "-c", "user.email=check@mzk.invalid", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env=env,
    ).stdout.strip()


def hook_repository(path: Path, files: dict[str, Path], env: dict) -> str:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    for name, source in files.items():
        shutil.copy(source, path / name)
    git("init", "-q", cwd=path, env=env)
    git("add", ".", cwd=path, env=env)
    git("commit", "-q", "-m", "hooks", cwd=path, env=env)
    return git("rev-parse", "HEAD", cwd=path, env=env)


def pre_commit(tool_bin: Path, built: Path, venv_mzk: Path) -> None:
    wheelhouse = WORK / "wheelhouse"
    shutil.rmtree(wheelhouse, ignore_errors=True)
    wheelhouse.mkdir(parents=True)
    shutil.copy(built, wheelhouse)
    cache = WORK / "downloads"
    if not list(cache.glob("flit_core-*.whl")):
        run([tool_bin / f"pip{EXE}", "download", "-q", "--no-deps", "--only-binary", ":all:", "-d", cache, FLIT_CORE])
    for downloaded in cache.glob("flit_core-*.whl"):
        shutil.copy(downloaded, wheelhouse)

    scratch = WORK / "pre-commit"
    shutil.rmtree(scratch, ignore_errors=True)
    env = without_rust()
    # Offline: the hook's package and the mzk wheel come from the wheelhouse only.
    env.update(
        PRE_COMMIT_HOME=str(scratch / "home"),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheelhouse),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    env.pop("PIP_CONFIG_FILE", None)
    wheel_hooks = hook_repository(
        scratch / "mzk-pre-commit",
        {
            ".pre-commit-hooks.yaml": ROOT / "pre-commit/.pre-commit-hooks.yaml",
            "pyproject.toml": ROOT / "pre-commit/pyproject.toml",
            "mzk_pre_commit.py": ROOT / "pre-commit/mzk_pre_commit.py",
        },
        env,
    )
    system_hooks = hook_repository(scratch / "mzk", {".pre-commit-hooks.yaml": ROOT / ".pre-commit-hooks.yaml"}, env)

    project = scratch / "project"
    (project / "workflows").mkdir(parents=True)
    shutil.copytree(ROOT / "bundles/Hello", project / "workflows/Hello")
    (project / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {scratch / 'mzk-pre-commit'}\n"
        f"    rev: {wheel_hooks}\n"
        "    hooks:\n"
        "      - id: mzk-check\n"
        f"  - repo: {scratch / 'mzk'}\n"
        f"    rev: {system_hooks}\n"
        "    hooks:\n"
        "      - id: mzk-check-system\n"
    )
    git("init", "-q", cwd=project, env=env)
    git("add", ".", cwd=project, env=env)
    pre_commit_exe = tool_bin / f"pre-commit{EXE}"
    # mzk-check-system runs the mzk on PATH: the one the wheel installed.
    system_env = dict(env, PATH=os.pathsep.join([str(venv_mzk.parent), env["PATH"]]))

    started = time.monotonic()
    clean = run([pre_commit_exe, "run", "--all-files", "--color", "never"], cwd=project, env=system_env, check=False)
    if clean.returncode != 0 or clean.stdout.count("Passed") != 2:
        fail(f"pre-commit on a clean bundle: expected both mzk hooks to pass:\n{clean.stdout}\n{clean.stderr}")
    installed = list((scratch / "home").glob("repo*/py_env-*/bin/mzk"))
    if len(installed) != 1:
        fail(f"the mzk-check hook's environment holds no mzk from the wheel: {installed}")
    measures["pre-commit: install the hook (wheel) + first run"] = f"{time.monotonic() - started:.1f} s"

    orchestrator = project / "workflows/Hello/orchestrator.yaml"
    orchestrator.write_text(orchestrator.read_text().replace("\nmax_turns:", "\nmax_turnz:"))
    git("add", ".", cwd=project, env=env)
    broken = run([pre_commit_exe, "run", "--all-files", "--color", "never"], cwd=project, env=system_env, check=False)
    if broken.returncode != 1 or broken.stdout.count("Failed") != 2 or broken.stdout.count("MZ101") < 2:
        fail(f"pre-commit on a broken bundle: expected both hooks to fail with MZ101:\n{broken.stdout}\n{broken.stderr}")
    if "workflows/Hello/orchestrator.yaml" not in broken.stdout:
        fail(f"pre-commit's output does not name the broken file:\n{broken.stdout}")
    print("   mzk-check (wheel, offline) and mzk-check-system: clean bundle passes, broken one fails with MZ101")


# -- 7 ---------------------------------------------------------------------


def sdist(tool_bin: Path, version: str) -> None:
    out = WORK / "sdist"
    shutil.rmtree(out, ignore_errors=True)
    run([tool_bin / f"maturin{EXE}", "sdist", "--out", out])
    archives = list(out.glob(f"mzk-{version}.tar.gz"))
    if len(archives) != 1:
        fail(f"expected mzk-{version}.tar.gz in {out}: {list(out.iterdir())}")
    import tarfile

    with tarfile.open(archives[0]) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
        archive.extractall(out, filter="data") if sys.version_info >= (3, 12) else archive.extractall(out)
    for needed in (
        "pyproject.toml",
        "Cargo.toml",
        "Cargo.lock",
        "server/Cargo.toml",
        "server/build.rs",
        "analyzer/Cargo.toml",
        "runtime/Cargo.toml",
        "python/mzk/__main__.py",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "README.md",
    ):
        if needed not in names:
            fail(f"{needed} is missing from the sdist")
    unpacked = out / f"mzk-{version}"
    # cargo resolves the packed workspace offline from the packed lock file
    # (which still lists the test and benchmark crates maturin leaves out:
    # pruning them needs no network), to the versions this checkout locks.
    # The build itself is what `pip install mzk-X.tar.gz` does where Rust exists.
    metadata = json.loads(
        run(
            ["cargo", "metadata", "--format-version", "1", "--offline", "--manifest-path", unpacked / "server/Cargo.toml"],
            env=dict(os.environ, CARGO_TARGET_DIR=str(out / "target")),
        ).stdout
    )
    members = {p["name"] for p in metadata["packages"] if p.get("source") is None}
    if not {"mzk-server", "mzk-analyzer", "mzk-runtime"} <= members:
        fail(f"the sdist's workspace lacks packages: {members}")
    locked = set(re.findall(r'name = "([^"]+)"\nversion = "([^"]+)"', (ROOT / "Cargo.lock").read_text()))
    drifted = sorted(
        f"{p['name']} {p['version']}" for p in metadata["packages"] if p.get("source") and (p["name"], p["version"]) not in locked
    )
    if drifted:
        fail(f"the sdist resolves dependencies this checkout's Cargo.lock does not lock: {drifted}")
    print(f"   {archives[0].name}: {human(archives[0].stat().st_size)}, workspace {sorted(members)}")
    measures["sdist"] = human(archives[0].stat().st_size)


def main() -> int:
    version = cargo_version()
    WORK.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        with stage("tools"):
            tool_bin = tools()
        with stage("schemas"):
            schemas(tool_bin, version)
        with stage("wheel"):
            built = wheel(tool_bin, version)
        with stage("venv without Rust"):
            venv_mzk = venv_checks(built, version)
        with stage("vsix"):
            # The binary maturin just built (and stripped) for the wheel.
            vsix(TARGET / "debug" / f"mzk{EXE}", version)
        with stage("pre-commit"):
            pre_commit(tool_bin, built, venv_mzk)
        with stage("sdist"):
            sdist(tool_bin, version)
    except CheckFailed as error:
        print(f"package check FAILED: {error}", file=sys.stderr)
        return 1
    total = time.monotonic() - started
    print("-- package: timings " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in timings))
    for name, value in measures.items():
        print(f"   {name}: {value}")
    print(f"package check: {len(timings)} passed, 0 failed ({total:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
