// How editor commands map to the server's workspace/executeCommand
// arguments. Code lenses pass the arguments themselves; from the command
// palette they come from the active editor. Pure, unit-tested.

import { bundleOf } from "./paths";

export const SERVER_COMMANDS = [
  "mzk.runWorkflow",
  "mzk.runFromAgent",
  "mzk.showGraph",
  "mzk.showPrompt",
] as const;
/** The commands that act on one agent: from the palette they ask which. */
export const AGENT_COMMANDS = ["mzk.runFromAgent", "mzk.showPrompt"];
export const RUN_COMMANDS = ["mzk.runWorkflow", "mzk.runFromAgent"];

export type Mapped = { args: unknown[] } | { error: string };

/**
 * The arguments to send for `command`: `given` when a code lens supplied
 * them, else the active file's bundle folder (and, for the agent commands,
 * the `agent` the user picked).
 */
export function commandArguments(
  command: string,
  given: unknown[],
  activeFile: string | undefined,
  exists: (p: string) => boolean,
  agent?: string,
): Mapped {
  if (given.length > 0) {
    return { args: given };
  }
  const bundle = activeFile ? bundleOf(activeFile, exists) : undefined;
  if (!bundle) {
    return { error: "Open a file of a workflow bundle (a folder with orchestrator.yaml) first." };
  }
  if (AGENT_COMMANDS.includes(command)) {
    if (!agent) {
      return { error: "Name the agent to run from." };
    }
    return { args: [bundle, agent] };
  }
  return { args: [bundle] };
}

/** Whether a command may run in this workspace (runs need Workspace Trust). */
export function allowed(command: string, trusted: boolean): boolean {
  return trusted || !RUN_COMMANDS.includes(command);
}
