// How editor commands map to the server's workspace/executeCommand
// arguments. Code lenses pass the arguments themselves; from the command
// palette they come from the active editor. Pure, unit-tested.

import { bundleOf } from "./paths";

export const SERVER_COMMANDS = [
  "mzk.runWorkflow",
  "mzk.runFromAgent",
  "mzk.showGraph",
  "mzk.showPrompt",
  "mzk.reply",
  "mzk.cancelRun",
] as const;
/** The commands that act on one agent: from the palette they ask which. */
export const AGENT_COMMANDS = ["mzk.runFromAgent", "mzk.showPrompt"];
export const RUN_COMMANDS = ["mzk.runWorkflow", "mzk.runFromAgent", "mzk.reply"];
/** The commands that act on a run of this session, not on a bundle. */
export const RUN_ID_COMMANDS = ["mzk.reply", "mzk.cancelRun"];

/** What the extension remembers of runs from their `mzk/runEvent` stream. */
export class RunTracker {
  /** The newest run still going. */
  active: string | undefined;
  /** The newest run waiting for the user. */
  paused: string | undefined;

  /** Follows one `mzk/runEvent` notification; returns a line for the output. */
  observe(params: { runId?: string; event?: { type?: string; status?: string } }): string {
    const id = params?.runId;
    const event = params?.event ?? {};
    if (id && event.type === "run_started") this.active = id;
    if (id && event.type === "user_message") this.active = id;
    if (id && event.type === "run_finished") {
      if (event.status === "paused") this.paused = id;
      else if (this.paused === id) this.paused = undefined;
      if (this.active === id) this.active = undefined;
    }
    return `[run ${id ?? "?"}] ${JSON.stringify(event)}`;
  }
}

/**
 * The arguments of a run command given a scenario the user picked (or none:
 * the configured model). A lens or the palette supplies the rest.
 */
export function withScenario(args: unknown[], scenario: string | undefined): unknown[] {
  if (!scenario || args.some((a) => typeof a === "object" && a !== null)) {
    return args;
  }
  return [...args, { scenario }];
}

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
  runs?: RunTracker,
  reply?: string,
): Mapped {
  if (given.length > 0) {
    return { args: given };
  }
  if (command === "mzk.reply") {
    if (!runs?.paused) return { error: "No run of this session is waiting for a reply." };
    if (reply === undefined) return { error: "Type the reply." };
    return { args: [runs.paused, reply] };
  }
  if (command === "mzk.cancelRun") {
    if (!runs?.active) return { error: "No run of this session is running." };
    return { args: [runs.active] };
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
