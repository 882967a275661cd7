// Which files are files of a Mozaiks workflow bundle: the YAML files of a
// folder holding orchestrator.yaml (and its extended_orchestration/task_batches.yaml)
// and its tools/*.py. Pure: the file system is passed in, so it is unit-tested.

import * as path from "node:path";

export const BUNDLE_FILES = [
  "orchestrator.yaml",
  "agents.yaml",
  "transition_graph.yaml",
  "context_variables.yaml",
  "tools.yaml",
  "structured_outputs.yaml",
  "middleware.yaml",
  "ui_config.yaml",
  "a2a.yaml",
  "extended_orchestration/task_batches.yaml",
];

/** Glob patterns that pre-select candidate files (the client then checks the folder). */
export const DOCUMENT_PATTERNS = [
  "**/{orchestrator,agents,transition_graph,context_variables,tools,structured_outputs,middleware,ui_config,a2a}.yaml",
  "**/extended_orchestration/task_batches.yaml",
  "**/tools/*.py",
];

/** The bundle folder of a bundle file, or undefined. */
export function bundleOf(file: string, exists: (p: string) => boolean): string | undefined {
  const absolute = path.resolve(file);
  const dir = path.dirname(absolute);
  for (const candidate of [dir, path.dirname(dir)]) {
    if (!exists(path.join(candidate, "orchestrator.yaml"))) {
      continue;
    }
    const relative = path.relative(candidate, absolute).split(path.sep).join("/");
    if (BUNDLE_FILES.includes(relative) || /^tools\/[^/]+\.py$/.test(relative)) {
      return candidate;
    }
  }
  return undefined;
}
