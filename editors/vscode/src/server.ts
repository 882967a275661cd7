// Where the mzk binary is and how to start it. Pure, unit-tested.

import * as path from "node:path";

export interface ServerSettings {
  /** mzk.server.path: empty means `mzk` on the PATH. */
  path: string;
  /** mzk.server.extraArgs */
  extraArgs: string[];
}

export type ServerCommand =
  | { command: string; args: string[] }
  | { missing: string };

/** Finds `name` in the PATH-like `searchPath`. */
export function which(
  name: string,
  searchPath: string,
  isExecutable: (p: string) => boolean,
  platform: string = process.platform,
): string | undefined {
  const names = platform === "win32" ? [`${name}.exe`, name] : [name];
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    for (const n of names) {
      const candidate = path.join(dir, n);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The command that starts the server, or why it cannot be found. */
export function resolveServer(
  settings: ServerSettings,
  searchPath: string,
  isExecutable: (p: string) => boolean,
): ServerCommand {
  const args = ["lsp", ...settings.extraArgs];
  const configured = settings.path.trim();
  if (configured) {
    return isExecutable(configured)
      ? { command: configured, args }
      : { missing: `mzk.server.path is set to "${configured}", which is not an executable file` };
  }
  const found = which("mzk", searchPath, isExecutable);
  return found
    ? { command: found, args }
    : { missing: "`mzk` was not found on the PATH and mzk.server.path is not set" };
}
