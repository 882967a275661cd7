// Where the mzk binary is and how to start it. Pure, unit-tested.
//
// Discovery, in order (docs/install.md):
//   1. `mzk.server.path`, when set;
//   2. with `mzk.importStrategy: "fromEnvironment"`, the `mzk` of the
//      workspace's Python environment: `.venv` or `venv` in a workspace
//      folder, then the interpreter the Python extension selected;
//   3. the binary bundled in a platform-specific .vsix (`useBundled`, the default);
//   4. `mzk` on the PATH.
// In an untrusted workspace step 2 is skipped: its environment is workspace content.

import * as path from "node:path";

export type ImportStrategy = "useBundled" | "fromEnvironment";

export interface ServerSettings {
  /** mzk.server.path: empty means "discover". */
  path: string;
  /** mzk.server.extraArgs */
  extraArgs: string[];
  /** mzk.importStrategy */
  importStrategy?: ImportStrategy;
}

/** What discovery may look at, gathered by the extension (or a test). */
export interface Surroundings {
  /** The PATH of the extension host. */
  searchPath: string;
  isExecutable: (p: string) => boolean;
  platform?: string;
  /** The binary inside the extension (platform-specific .vsix), if any. */
  bundled?: string;
  /** The workspace folders' paths. */
  workspaceFolders?: string[];
  /** The interpreter the Python extension selected, if it is installed. */
  pythonInterpreter?: string;
  /** Workspace Trust: false skips the workspace's environment. */
  trusted?: boolean;
}

export type ServerSource = "setting" | "environment" | "bundled" | "path";

export type ServerCommand =
  | { command: string; args: string[]; source: ServerSource }
  | { missing: string };

/** Path functions of `platform` (tests run the Windows cases on Linux). */
function paths(platform: string): path.PlatformPath {
  return platform === "win32" ? path.win32 : path.posix;
}

export function executableName(platform: string = process.platform): string {
  return platform === "win32" ? "mzk.exe" : "mzk";
}

/** Where the bundled binary sits inside the extension's folder. */
export function bundledPath(extensionPath: string, platform: string = process.platform): string {
  return paths(platform).join(extensionPath, "bundled", executableName(platform));
}

/** Finds `name` in the PATH-like `searchPath`. */
export function which(
  name: string,
  searchPath: string,
  isExecutable: (p: string) => boolean,
  platform: string = process.platform,
): string | undefined {
  const names = platform === "win32" ? [`${name}.exe`, name] : [name];
  const p = paths(platform);
  for (const dir of searchPath.split(p.delimiter)) {
    if (!dir) continue;
    for (const n of names) {
      const candidate = p.join(dir, n);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The candidates for the environment's `mzk`, most specific first. */
export function environmentCandidates(
  workspaceFolders: string[],
  pythonInterpreter: string | undefined,
  platform: string = process.platform,
): string[] {
  const exe = executableName(platform);
  const p = paths(platform);
  const scripts = platform === "win32" ? "Scripts" : "bin";
  const candidates: string[] = [];
  for (const folder of workspaceFolders) {
    for (const venv of [".venv", "venv"]) {
      candidates.push(p.join(folder, venv, scripts, exe));
    }
  }
  if (pythonInterpreter) {
    // A virtual environment's interpreter sits beside its programs; a
    // Windows base installation keeps them in Scripts next to python.exe.
    const dir = p.dirname(pythonInterpreter);
    candidates.push(p.join(dir, exe));
    if (platform === "win32") candidates.push(p.join(dir, "Scripts", exe));
  }
  return candidates;
}

/** The workspace environment's `mzk`, if there is one. */
export function findInEnvironment(surroundings: Surroundings): string | undefined {
  if (surroundings.trusted === false) return undefined;
  return environmentCandidates(
    surroundings.workspaceFolders ?? [],
    surroundings.pythonInterpreter,
    surroundings.platform,
  ).find((candidate) => surroundings.isExecutable(candidate));
}

/** The command that starts the server, or why it cannot be found. */
export function resolveServer(settings: ServerSettings, surroundings: Surroundings): ServerCommand {
  const args = ["lsp", ...settings.extraArgs];
  const { isExecutable } = surroundings;
  const configured = settings.path.trim();
  if (configured) {
    return isExecutable(configured)
      ? { command: configured, args, source: "setting" }
      : { missing: `mzk.server.path is set to "${configured}", which is not an executable file` };
  }
  if (settings.importStrategy === "fromEnvironment") {
    const found = findInEnvironment(surroundings);
    if (found) return { command: found, args, source: "environment" };
  }
  if (surroundings.bundled && isExecutable(surroundings.bundled)) {
    return { command: surroundings.bundled, args, source: "bundled" };
  }
  const found = which("mzk", surroundings.searchPath, isExecutable, surroundings.platform);
  if (found) return { command: found, args, source: "path" };
  const where =
    settings.importStrategy === "fromEnvironment"
      ? "in the workspace's Python environment, in this extension (no binary for this platform) or on the PATH"
      : "in this extension (no binary for this platform) or on the PATH";
  return { missing: `\`mzk\` was not found ${where}, and mzk.server.path is not set` };
}

/** "0.1.0" from `mzk 0.1.0 (1a2b3c4d5 2026-11-01)`. */
export function versionNumber(versionOutput: string): string | undefined {
  return /^mzk\s+(\S+)/m.exec(versionOutput.trim())?.[1];
}

/**
 * What to tell the user when the workspace environment's mzk and the bundled
 * one are different versions (undefined when they agree or one is missing).
 */
export function versionMismatch(
  used: ServerSource,
  environment: { path: string; version: string | undefined } | undefined,
  bundled: { path: string; version: string | undefined } | undefined,
): string | undefined {
  if (!environment?.version || !bundled?.version) return undefined;
  const env = versionNumber(environment.version);
  const own = versionNumber(bundled.version);
  if (!env || !own || env === own) return undefined;
  if (used === "environment") {
    return `mzk: using mzk ${env} from the workspace's Python environment (${environment.path}); this extension bundles mzk ${own}.`;
  }
  if (used === "bundled") {
    return `mzk: using the bundled mzk ${own}, but the workspace's Python environment has mzk ${env} (${environment.path}); set "mzk.importStrategy": "fromEnvironment" to use that one.`;
  }
  return undefined;
}
