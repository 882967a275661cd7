import { test } from "node:test";
import assert from "node:assert/strict";
import * as path from "node:path";
import { allowed, commandArguments, RunTracker, SERVER_COMMANDS, withScenario } from "../src/commands";
import { graphPageArguments, openTarget, panelFor } from "../src/graph";

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

test("the graph panel asks for the page with its nonce, refreshes its bundle and opens only inside it", () => {
  assert.deepEqual(graphPageArguments(desk, "abc"), [desk, { format: "html", nonce: "abc" }]);
  const other = path.resolve("/w/Other");
  assert.equal(panelFor(path.join(desk, "agents.yaml"), [other, desk]), desk);
  assert.equal(panelFor(path.join(desk, "tools", "x.py"), [desk]), desk);
  assert.equal(panelFor(path.resolve("/w/DeskTwo/agents.yaml"), [desk]), undefined);
  assert.equal(panelFor(desk, [desk]), undefined);
  assert.deepEqual(openTarget(desk, { type: "open", path: "transition_graph.yaml", line: 4, column: 19 }), {
    file: path.join(desk, "transition_graph.yaml"),
    line: 3,
    column: 18,
  });
  assert.equal(openTarget(desk, { type: "open", path: "../secrets.yaml", line: 1, column: 1 }), undefined);
  assert.equal(openTarget(desk, { type: "open", path: "/etc/passwd", line: 1, column: 1 }), undefined);
  assert.equal(openTarget(desk, { type: "open", path: "agents.yaml", line: 0, column: 1 }), undefined);
  assert.equal(openTarget(desk, { type: "other" }), undefined);
  assert.equal(openTarget(desk, null), undefined);
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
  for (const key of ["mzk.server.path", "mzk.server.extraArgs", "mzk.trace.server", "mzk.run.backend", "mzk.run.endpoint", "mzk.run.model"]) {
    assert.ok(settings.includes(key), key);
  }
  assert.equal(manifest.capabilities.untrustedWorkspaces.supported, "limited");
});

test("reply and cancel act on the runs this session saw", () => {
  const runs = new RunTracker();
  assert.ok("error" in commandArguments("mzk.reply", [], undefined, exists, undefined, runs, "yes"));
  assert.ok("error" in commandArguments("mzk.cancelRun", [], undefined, exists, undefined, runs));
  runs.observe({ runId: "r1", event: { type: "run_started" } });
  assert.deepEqual(commandArguments("mzk.cancelRun", [], undefined, exists, undefined, runs), { args: ["r1"] });
  const line = runs.observe({ runId: "r1", event: { type: "run_finished", status: "paused" } });
  assert.ok(line.startsWith("[run r1] "));
  assert.equal(runs.active, undefined);
  assert.deepEqual(commandArguments("mzk.reply", [], undefined, exists, undefined, runs, "yes"), { args: ["r1", "yes"] });
  runs.observe({ runId: "r1", event: { type: "user_message" } });
  runs.observe({ runId: "r1", event: { type: "run_finished", status: "completed" } });
  assert.equal(runs.paused, undefined);
  assert.deepEqual(withScenario(["/b"], "/b/scenarios/x.yaml"), ["/b", { scenario: "/b/scenarios/x.yaml" }]);
  assert.deepEqual(withScenario(["/b", "A"], undefined), ["/b", "A"]);
  assert.equal(allowed("mzk.reply", false), false);
  assert.equal(allowed("mzk.cancelRun", false), true);
});
