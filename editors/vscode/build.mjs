// Builds the extension with esbuild: dist/extension.js (vscode external).
// The graph panel shows the server's self-contained page: no media to ship.
// With --tests, bundles test/*.test.ts to dist-test/ for `node --test`.
import { build } from "esbuild";
import { readdirSync } from "node:fs";

if (process.argv.includes("--tests")) {
  const tests = readdirSync("test").filter((f) => f.endsWith(".test.ts"));
  await build({
    entryPoints: tests.map((f) => `test/${f}`),
    outdir: "dist-test",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    logLevel: "warning",
  });
} else {
  await build({
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
    minify: true,
    sourcemap: false,
    logLevel: "warning",
  });
}
