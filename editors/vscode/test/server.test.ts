import { test } from "node:test";
import assert from "node:assert/strict";
import * as path from "node:path";
import {
  bundledPath,
  environmentCandidates,
  resolveServer,
  Surroundings,
  versionMismatch,
  versionNumber,
  which,
} from "../src/server";

const bin = path.join("/opt", "mzk", "bin");
const onPath = path.join(bin, "mzk");
const bundled = bundledPath(path.join("/ext", "mzk-0.1.0"), "linux");
const workspace = path.join("/work", "project");
const dotVenv = path.join(workspace, ".venv", "bin", "mzk");
const plainVenv = path.join(workspace, "venv", "bin", "mzk");
const interpreterMzk = path.join("/envs", "conda", "bin", "mzk");

/** Surroundings where exactly `present` are executables. */
function around(present: string[], extra: Partial<Surroundings> = {}): Surroundings {
  const executables = new Set(present);
  return {
    searchPath: ["/usr/bin", bin].join(path.delimiter),
    isExecutable: (p) => executables.has(p),
    platform: "linux",
    bundled,
    workspaceFolders: [workspace],
    pythonInterpreter: path.join("/envs", "conda", "bin", "python3"),
    trusted: true,
    ...extra,
  };
}

const everything = [onPath, bundled, dotVenv, plainVenv, interpreterMzk, "/custom/mzk"];

test("discovery order: setting, environment (fromEnvironment), bundled, PATH", () => {
  const fromEnv = { path: "", extraArgs: [], importStrategy: "fromEnvironment" as const };
  const useBundled = { path: "", extraArgs: [], importStrategy: "useBundled" as const };
  // 1. mzk.server.path beats everything, whatever the strategy.
  assert.deepEqual(resolveServer({ ...fromEnv, path: "/custom/mzk" }, around(everything)), {
    command: "/custom/mzk",
    args: ["lsp"],
    source: "setting",
  });
  // 2. fromEnvironment: .venv, then venv, then the selected interpreter's folder.
  assert.deepEqual(resolveServer(fromEnv, around(everything)), { command: dotVenv, args: ["lsp"], source: "environment" });
  assert.deepEqual(resolveServer(fromEnv, around([plainVenv, interpreterMzk, bundled, onPath])), {
    command: plainVenv,
    args: ["lsp"],
    source: "environment",
  });
  assert.deepEqual(resolveServer(fromEnv, around([interpreterMzk, bundled, onPath])), {
    command: interpreterMzk,
    args: ["lsp"],
    source: "environment",
  });
  // ... and without an environment's mzk, the bundled one, then PATH.
  assert.deepEqual(resolveServer(fromEnv, around([bundled, onPath])), { command: bundled, args: ["lsp"], source: "bundled" });
  assert.deepEqual(resolveServer(fromEnv, around([onPath])), { command: onPath, args: ["lsp"], source: "path" });
  // 3. useBundled (the default, also when unset) never looks at the environment.
  for (const settings of [useBundled, { path: "", extraArgs: [] }]) {
    assert.deepEqual(resolveServer(settings, around(everything)), { command: bundled, args: ["lsp"], source: "bundled" });
  }
  // 4. PATH last: a .vsix without a binary (the platform-neutral one).
  assert.deepEqual(resolveServer(useBundled, around([dotVenv, onPath], { bundled: undefined })), {
    command: onPath,
    args: ["lsp"],
    source: "path",
  });
});

test("an untrusted workspace's environment is never started", () => {
  const fromEnv = { path: "", extraArgs: [], importStrategy: "fromEnvironment" as const };
  assert.deepEqual(resolveServer(fromEnv, around(everything, { trusted: false })), {
    command: bundled,
    args: ["lsp"],
    source: "bundled",
  });
});

test("mzk is found on the PATH, with extra arguments after `lsp`", () => {
  assert.deepEqual(resolveServer({ path: "", extraArgs: ["--log", "x"] }, around([onPath])), {
    command: onPath,
    args: ["lsp", "--log", "x"],
    source: "path",
  });
});

test("a configured path wins, and a wrong one says so", () => {
  const wrong = resolveServer({ path: "/nope/mzk", extraArgs: [] }, around(everything));
  assert.ok("missing" in wrong && wrong.missing.includes("/nope/mzk"), JSON.stringify(wrong));
});

test("missing everywhere: a clear reason", () => {
  const none = resolveServer({ path: "  ", extraArgs: [] }, around([]));
  assert.ok("missing" in none && none.missing.includes("PATH") && none.missing.includes("extension"), JSON.stringify(none));
  const noneFromEnv = resolveServer({ path: "", extraArgs: [], importStrategy: "fromEnvironment" }, around([]));
  assert.ok("missing" in noneFromEnv && noneFromEnv.missing.includes("Python environment"), JSON.stringify(noneFromEnv));
  assert.equal(which("mzk", "", () => true), undefined);
  assert.equal(which("mzk", "C:\\w;D:\\x", (p) => p === "D:\\x\\mzk.exe", "win32"), "D:\\x\\mzk.exe");
});

test("Windows: Scripts folders and mzk.exe", () => {
  const candidates = environmentCandidates(["C:\\p"], "C:\\Python312\\python.exe", "win32");
  assert.deepEqual(candidates, [
    "C:\\p\\.venv\\Scripts\\mzk.exe",
    "C:\\p\\venv\\Scripts\\mzk.exe",
    "C:\\Python312\\mzk.exe",
    "C:\\Python312\\Scripts\\mzk.exe",
  ]);
  assert.ok(bundledPath("/ext", "win32").endsWith("mzk.exe"));
  assert.ok(bundledPath("/ext", "linux").endsWith(path.join("bundled", "mzk")));
});

test("version mismatch: said for the binary in use, silent when versions agree", () => {
  assert.equal(versionNumber("mzk 0.1.0 (1a2b3c4d5 2026-11-01)\n"), "0.1.0");
  assert.equal(versionNumber("mzk 0.2.0\n"), "0.2.0");
  assert.equal(versionNumber("garbage"), undefined);
  const env = { path: dotVenv, version: "mzk 0.2.0\n" };
  const own = { path: bundled, version: "mzk 0.1.0 (1a2b3c4d5 2026-11-01)\n" };
  const usingEnv = versionMismatch("environment", env, own);
  assert.ok(usingEnv?.includes("0.2.0") && usingEnv.includes("bundles mzk 0.1.0"), usingEnv);
  const usingBundled = versionMismatch("bundled", env, own);
  assert.ok(usingBundled?.includes("fromEnvironment") && usingBundled.includes(dotVenv), usingBundled);
  // The same version built from different commits is not a mismatch.
  assert.equal(versionMismatch("environment", { path: dotVenv, version: "mzk 0.1.0\n" }, own), undefined);
  assert.equal(versionMismatch("environment", env, undefined), undefined);
  assert.equal(versionMismatch("setting", env, own), undefined);
});
