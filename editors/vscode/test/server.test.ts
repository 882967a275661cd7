import { test } from "node:test";
import assert from "node:assert/strict";
import * as path from "node:path";
import { resolveServer, which } from "../src/server";

const bin = path.join("/opt", "mzk", "bin");
const executables = new Set([path.join(bin, "mzk"), "/custom/mzk"]);
const isExecutable = (p: string) => executables.has(p);
const searchPath = ["/usr/bin", bin].join(path.delimiter);

test("mzk is found on the PATH, with extra arguments after `lsp`", () => {
  assert.deepEqual(resolveServer({ path: "", extraArgs: ["--log", "x"] }, searchPath, isExecutable), {
    command: path.join(bin, "mzk"),
    args: ["lsp", "--log", "x"],
  });
});

test("a configured path wins, and a wrong one says so", () => {
  assert.deepEqual(resolveServer({ path: "/custom/mzk", extraArgs: [] }, searchPath, isExecutable), {
    command: "/custom/mzk",
    args: ["lsp"],
  });
  const wrong = resolveServer({ path: "/nope/mzk", extraArgs: [] }, searchPath, isExecutable);
  assert.ok("missing" in wrong && wrong.missing.includes("/nope/mzk"));
});

test("missing everywhere: a clear reason", () => {
  const none = resolveServer({ path: "  ", extraArgs: [] }, "/usr/bin", isExecutable);
  assert.ok("missing" in none && none.missing.includes("PATH"));
  assert.equal(which("mzk", "", isExecutable), undefined);
  assert.equal(which("mzk", "/w", (p) => p === path.join("/w", "mzk.exe"), "win32"), path.join("/w", "mzk.exe"));
});
