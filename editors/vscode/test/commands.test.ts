import { test } from "node:test";
import assert from "node:assert/strict";
import * as path from "node:path";
import { allowed, commandArguments, SERVER_COMMANDS } from "../src/commands";
import { escapeHtml, graphHtml } from "../src/graph";

const desk = path.resolve("/w/Desk");
const exists = (p: string) => p === path.join(desk, "orchestrator.yaml");

test("lens arguments pass through unchanged", () => {
  assert.deepEqual(commandArguments("mzk.runFromAgent", ["/b", "A"], undefined, exists), { args: ["/b", "A"] });
});

test("from the palette, the active file's bundle is the argument", () => {
  const active = path.join(desk, "agents.yaml");
  assert.deepEqual(commandArguments("mzk.showGraph", [], active, exists), { args: [desk] });
  assert.deepEqual(commandArguments("mzk.runWorkflow", [], active, exists), { args: [desk] });
  assert.deepEqual(commandArguments("mzk.runFromAgent", [], active, exists, "IntakeAgent"), {
    args: [desk, "IntakeAgent"],
  });
  assert.ok("error" in commandArguments("mzk.runFromAgent", [], active, exists));
  assert.deepEqual(commandArguments("mzk.showPrompt", [], active, exists, "IntakeAgent"), {
    args: [desk, "IntakeAgent"],
  });
  assert.ok("error" in commandArguments("mzk.showPrompt", [], active, exists));
  assert.ok("error" in commandArguments("mzk.showGraph", [], path.resolve("/w/notes.yaml"), exists));
  assert.ok("error" in commandArguments("mzk.showGraph", [], undefined, exists));
});

test("runs need a trusted workspace; the graph does not", () => {
  assert.equal(allowed("mzk.runWorkflow", false), false);
  assert.equal(allowed("mzk.runFromAgent", false), false);
  assert.equal(allowed("mzk.showGraph", false), true);
  assert.equal(allowed("mzk.runWorkflow", true), true);
});

test("the graph page escapes the text and runs only the nonce'd local script", () => {
  const html = graphHtml('flowchart TD\n  a["<b>"] --> b', "vscode-resource:/m.js", "vscode-resource:", "abc");
  assert.ok(html.includes("&lt;b&gt;"));
  assert.ok(!html.includes('"<b>"'));
  assert.ok(html.includes("script-src 'nonce-abc'"));
  assert.ok(!/https?:\/\//.test(html), "no remote resource");
  assert.equal(escapeHtml('&"'), "&amp;&quot;");
});

test("the manifest contributes every server command, the settings and the activation event", async () => {
  const { readFileSync } = await import("node:fs");
  const manifest = JSON.parse(readFileSync("package.json", "utf8"));
  const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command);
  for (const command of [...SERVER_COMMANDS, "mzk.restartServer", "mzk.showOutput"]) {
    assert.ok(contributed.includes(command), command);
  }
  assert.deepEqual(manifest.activationEvents, ["workspaceContains:**/orchestrator.yaml"]);
  const settings = Object.keys(manifest.contributes.configuration.properties);
  for (const key of ["mzk.server.path", "mzk.server.extraArgs", "mzk.trace.server", "mzk.run.backend", "mzk.run.endpoint"]) {
    assert.ok(settings.includes(key), key);
  }
  assert.equal(manifest.capabilities.untrustedWorkspaces.supported, "limited");
});
