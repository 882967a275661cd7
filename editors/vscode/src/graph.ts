// The graph panel's decisions, apart from VS Code's API: what to ask the
// server for, which panel a saved file refreshes, and where a click in the
// page may open. The page itself (layout, pan and zoom, focus, findings)
// is the server's (`mzk.showGraph` with the html format). Pure, unit-tested.

import * as path from "node:path";

/** The `mzk.showGraph` arguments for the graph page in a webview whose
 * content security policy allows scripts with `nonce`. */
export function graphPageArguments(bundle: string, nonce: string): unknown[] {
  return [bundle, { format: "html", nonce }];
}

/** The bundle (of those with an open panel) that holds `file`, if any:
 * saving it changes that bundle's graph. */
export function panelFor(file: string, bundles: Iterable<string>): string | undefined {
  let best: string | undefined;
  for (const bundle of bundles) {
    const relative = path.relative(bundle, file);
    if (relative && !relative.startsWith("..") && !path.isAbsolute(relative)) {
      if (!best || bundle.length > best.length) best = bundle;
    }
  }
  return best;
}

/** Where the page's "open" message points, inside the bundle only (a page
 * cannot make the editor open another file); 0-based line and column. */
export function openTarget(
  bundle: string,
  message: unknown,
): { file: string; line: number; column: number } | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const m = message as { type?: unknown; path?: unknown; line?: unknown; column?: unknown };
  if (m.type !== "open" || typeof m.path !== "string") return undefined;
  const line = Number(m.line);
  const column = Number(m.column);
  if (!Number.isInteger(line) || !Number.isInteger(column) || line < 1 || column < 1) return undefined;
  const file = path.resolve(bundle, m.path);
  const relative = path.relative(bundle, file);
  if (!relative || relative.startsWith("..") || path.isAbsolute(relative)) return undefined;
  return { file, line: line - 1, column: column - 1 };
}
