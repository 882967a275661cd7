import { test } from "node:test";
import assert from "node:assert/strict";
import * as path from "node:path";
import { bundleOf } from "../src/paths";

const root = path.resolve("/w");
const files = new Set([
  path.join(root, "Desk", "orchestrator.yaml"),
  path.join(root, "Desk", "agents.yaml"),
]);
const exists = (p: string) => files.has(p);

test("bundle YAML files, task batches and tools/*.py belong to their bundle", () => {
  const desk = path.join(root, "Desk");
  assert.equal(bundleOf(path.join(desk, "agents.yaml"), exists), desk);
  assert.equal(bundleOf(path.join(desk, "extended_orchestration", "task_batches.yaml"), exists), desk);
  assert.equal(bundleOf(path.join(desk, "tools", "lookup.py"), exists), desk);
});

test("other files do not", () => {
  const desk = path.join(root, "Desk");
  assert.equal(bundleOf(path.join(desk, "notes.yaml"), exists), undefined);
  assert.equal(bundleOf(path.join(desk, "tools", "sub", "x.py"), exists), undefined);
  assert.equal(bundleOf(path.join(root, "agents.yaml"), exists), undefined);
  assert.equal(bundleOf(path.join(root, "Other", "agents.yaml"), exists), undefined);
});
