#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what it needs, then runs
# formatting and lint checks and every test (unit, fixtures, CLI, conformance
# with mozaiks 0.2.0 from PyPI, the language server under headless Neovim and Emacs eglot,
# the graph page in headless Chromium),
# then the packaging check, then each fuzz target for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each stage says how long the one before it took, and the run its total.
stage_name=""
stage_start=$SECONDS
stage() {
  if [ -n "$stage_name" ]; then
    echo "-- $stage_name: $((SECONDS - stage_start)) s (total $SECONDS s)"
  fi
  stage_name="$1"
  stage_start=$SECONDS
  [ -z "$1" ] || echo "== $1"
}
stage "install (apt, rustup components)"

# The test command must leave the checkout as it found it: what git shows
# now is compared with what it shows at the end.
tree_before=""
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  tree_before=$(git status --porcelain)
fi

need_apt=()
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  need_apt+=(python3-venv)
fi
# The real editors the language-server end-to-end tests drive.
command -v nvim >/dev/null 2>&1 || need_apt+=(neovim)
if ! command -v emacs >/dev/null 2>&1 || ! emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; then
  need_apt+=(emacs-nox elpa-eglot)
fi
# The VS Code extension is built, unit-tested and packaged with Node (20+) and npm.
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
# libFuzzer (the fuzz targets) is C++, built by the cc crate.
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
# The graph page is tested in Debian's Chromium (tests/tests/graph_page.rs).
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]} (apt)"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi

stage "VS Code extension (editors/vscode)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node $node_major is too old: the VS Code extension's tools (@vscode/vsce 3.9) need Node 20 or later" >&2
  exit 1
fi
(
  cd editors/vscode
  npm ci --no-audit --no-fund --loglevel=error
  npm run --silent typecheck
  npm run --silent build
  npm test --silent
  npx vsce package --no-dependencies -o dist/mzk.vsix
  python3 - <<'PY'
import json, zipfile
names = zipfile.ZipFile("dist/mzk.vsix").namelist()
for needed in ("extension/package.json", "extension/dist/extension.js", "extension/LICENSE.txt"):
    assert needed in names, f"{needed} missing from the .vsix: {names}"
manifest = json.loads(zipfile.ZipFile("dist/mzk.vsix").read("extension/package.json"))
assert manifest["activationEvents"] == ["workspaceContains:**/orchestrator.yaml"], manifest["activationEvents"]
print(f"mzk.vsix: {len(names)} files, manifest ok")
PY
)

# The graph page's browser test drives Chromium with playwright-core.
stage "browser test packages (tests/browser)"
(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)

# A build from a clean checkout gains nothing from incremental compilation's
# caches, which take gigabytes.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
stage "cargo fmt --check"
cargo fmt --all -- --check
stage "cargo clippy"
cargo clippy --workspace --all-targets -q -- -D warnings
# A missing editor must fail the editor tests here, not skip them.
export MZK_REQUIRE_EDITORS=1
# Likewise the reference (mozaiks 0.2.0 from PyPI): its tests fail, not skip.
export MZK_REQUIRE_REFERENCE=1
# And the browser the graph page is tested in.
export MZK_REQUIRE_BROWSER=1
# The fuzz targets' build (a release build of their own) needs nothing from
# the tests: it runs meanwhile at the lowest priority, taking the cores the
# tests leave idle (they wait on editors, the reference and subprocesses).
fuzz_build_log="${CARGO_TARGET_DIR:-target}/fuzz-build.log"
mkdir -p "$(dirname "$fuzz_build_log")"
nice -n 19 python3 scripts/fuzz.py --build-only >"$fuzz_build_log" 2>&1 &
fuzz_build_pid=$!
# If a stage fails, the background build goes with the run.
# (Each command of the trap must succeed: under `set -e` a failing one
# would turn the run's status into 1.)
trap 'pkill -P "$fuzz_build_pid" 2>/dev/null || true; kill "$fuzz_build_pid" 2>/dev/null || true' EXIT
stage "cargo test"
cargo test --workspace -j2 -- --nocapture 2>&1
# The example bundles' scenarios, with every transition rule covered, by the
# command line the tests just built (`cargo run` would build it once more).
stage "mzk test bundles"
"${CARGO_TARGET_DIR:-target}/debug/mzk-e2e" test bundles --min-coverage 100
# Every runtime scenario (fixtures, examples, real bundles) through mzk's
# engine and the real mozaiks 0.2.0 runtime; a difference not in the table
# of docs/engines.md fails the run (tests/conformance/engines.py).
stage "runtime conformance (mzk's engine vs mozaiks)"
python3 tests/conformance/engines.py --mzk "${CARGO_TARGET_DIR:-target}/debug/mzk-e2e"
# mzk the way its users get it: the wheel for this platform (from the build
# above) installed into a fresh venv and run with no Rust on PATH, the
# linux-x64 .vsix's bundled server, a real pre-commit run with the hooks, and
# the Action and workflows against GitHub's schemas (scripts/package_check.py).
stage "packaging"
python3 scripts/package_check.py
# Each fuzz target for a bounded time, two at a time (one core each); a
# crash, hang or out-of-memory fails the run and keeps the input in
# fuzz/regressions.
stage "fuzz"
if ! wait "$fuzz_build_pid"; then
  cat "$fuzz_build_log" >&2
  echo "the fuzz targets did not build (log above)" >&2
  exit 1
fi
trap - EXIT
python3 scripts/fuzz.py --seconds "${MZK_FUZZ_SECONDS:-60}"
stage ""
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  tree_after=$(git status --porcelain)
  if [ "$tree_after" != "$tree_before" ]; then
    echo "the test command changed the checkout (git status before and after):" >&2
    diff <(echo "$tree_before") <(echo "$tree_after") >&2 || true
    git diff --stat >&2 || true
    exit 1
  fi
fi
