// Packages a platform-specific .vsix that carries the mzk binary:
//   node package-target.mjs --target linux-x64 --binary PATH/TO/mzk [--out FILE]
// Targets: linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64 (any
// target vsce knows). The binary lands in bundled/ (see bundledPath in
// src/server.ts), executable, and is removed again after packaging. Run
// `npm run build` first.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    target: { type: "string" },
    binary: { type: "string" },
    out: { type: "string" },
  },
});
const fail = (message) => {
  console.error(`package-target: ${message}`);
  process.exit(2);
};
if (!values.target || !values.binary) {
  fail("usage: node package-target.mjs --target TARGET --binary PATH/TO/mzk [--out FILE]");
}
if (!existsSync(values.binary)) fail(`${values.binary} does not exist: build mzk for ${values.target} first`);
if (!existsSync("dist/extension.js")) fail("dist/extension.js is missing: run `npm run build` first");
const windows = values.target.startsWith("win32-");
if (windows !== values.binary.toLowerCase().endsWith(".exe")) {
  fail(`the binary for ${values.target} must ${windows ? "" : "not "}end in .exe: ${values.binary}`);
}
const out = values.out ?? `dist/mzk-${values.target}.vsix`;
const bundled = `bundled/${windows ? "mzk.exe" : "mzk"}`;
rmSync("bundled", { recursive: true, force: true });
mkdirSync("bundled");
try {
  copyFileSync(values.binary, bundled);
  chmodSync(bundled, 0o755);
  const vsce = spawnSync(
    process.platform === "win32" ? "npx.cmd" : "npx",
    ["vsce", "package", "--no-dependencies", "--target", values.target, "-o", out],
    { stdio: "inherit" },
  );
  if (vsce.status !== 0) fail(`vsce package failed (status ${vsce.status})`);
} finally {
  rmSync("bundled", { recursive: true, force: true });
}
console.log(`package-target: ${out} (${values.target}, ${bundled})`);
