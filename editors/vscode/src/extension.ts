// The VS Code side of mzk: starts `mzk lsp` for the files of workflow bundles,
// maps the editor's commands to the server's, renders the transition graph,
// answers the server's questions during runs, and keeps runs out of
// untrusted workspaces. Everything decidable without VS Code lives in the
// pure modules beside this one (and is unit-tested there).

import * as childProcess from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

import {
  AGENT_COMMANDS,
  allowed,
  commandArguments,
  RUN_COMMANDS,
  RunTracker,
  withScenario,
} from "./commands";
import { graphPageArguments, openTarget, panelFor } from "./graph";
import { bundleOf, DOCUMENT_PATTERNS } from "./paths";
import {
  bundledPath,
  findInEnvironment,
  ImportStrategy,
  resolveServer,
  ServerSource,
  Surroundings,
  versionMismatch,
} from "./server";

const INSTALL_URL = "https://github.com/OWNER/mzk/blob/main/editors/vscode/README.md#install";

let client: LanguageClient | undefined;
const runs = new RunTracker();
let output: vscode.LogOutputChannel;

const exists = (p: string) => fs.existsSync(p);
const isExecutable = (p: string) => {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

function settings() {
  const config = vscode.workspace.getConfiguration("mzk");
  return {
    path: config.get<string>("server.path", ""),
    extraArgs: config.get<string[]>("server.extraArgs", []),
    importStrategy: config.get<ImportStrategy>("importStrategy", "useBundled"),
    run: {
      backend: config.get<string>("run.backend", "synthetic"),
      endpoint: config.get<string>("run.endpoint", ""),
      model: config.get<string>("run.model", ""),
    },
  };
}

/** The interpreter the Python extension selected for the first workspace folder, if it is installed. */
async function selectedInterpreter(): Promise<string | undefined> {
  interface PythonApi {
    environments?: {
      getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
      resolveEnvironment(path: string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
    };
  }
  const extension = vscode.extensions.getExtension<PythonApi>("ms-python.python");
  if (!extension) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const active = api?.environments?.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
    if (!active) return undefined;
    const resolved = await api?.environments?.resolveEnvironment(active.path);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch (error) {
    output.appendLine(`mzk: could not ask the Python extension for the selected interpreter: ${error}`);
    return undefined;
  }
}

async function surroundings(context: vscode.ExtensionContext, strategy: ImportStrategy): Promise<Surroundings> {
  const bundled = bundledPath(context.extensionPath);
  // A .vsix unpacked without file modes leaves the bundled binary not executable.
  if (process.platform !== "win32" && fs.existsSync(bundled) && !isExecutable(bundled)) {
    try {
      fs.chmodSync(bundled, 0o755);
    } catch (error) {
      output.appendLine(`mzk: the bundled binary ${bundled} is not executable and chmod failed: ${error}`);
    }
  }
  return {
    searchPath: process.env.PATH ?? "",
    isExecutable,
    bundled,
    workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    // Ask the Python extension only when its answer can matter.
    pythonInterpreter: strategy === "fromEnvironment" || fs.existsSync(bundled) ? await selectedInterpreter() : undefined,
    trusted: vscode.workspace.isTrusted,
  };
}

function versionOf(binary: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    childProcess.execFile(binary, ["--version"], { timeout: 10_000 }, (error, stdout) =>
      resolve(error ? undefined : stdout),
    );
  });
}

/** Says once (per pair of binaries and versions) when the environment's and the bundled mzk differ. */
async function noteVersions(context: vscode.ExtensionContext, used: ServerSource, around: Surroundings): Promise<void> {
  const environment = findInEnvironment(around);
  if (!environment || !around.bundled || !isExecutable(around.bundled)) return;
  const [envVersion, bundledVersion] = await Promise.all([versionOf(environment), versionOf(around.bundled)]);
  const message = versionMismatch(
    used,
    { path: environment, version: envVersion },
    { path: around.bundled, version: bundledVersion },
  );
  if (!message) return;
  output.appendLine(message);
  const key = `mzk.versionNote:${environment}:${envVersion?.trim()}:${bundledVersion?.trim()}`;
  if (context.globalState.get<boolean>(key)) return;
  await context.globalState.update(key, true);
  void vscode.window.showInformationMessage(message);
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const current = settings();
  const around = await surroundings(context, current.importStrategy);
  const server = resolveServer(current, around);
  if ("missing" in server) {
    output.appendLine(`mzk: ${server.missing}`);
    const choice = await vscode.window.showErrorMessage(
      `mzk: ${server.missing}. Install mzk (pip install mzk) or set mzk.server.path.`,
      "Open install steps",
      "Open settings",
    );
    if (choice === "Open install steps") {
      void vscode.env.openExternal(vscode.Uri.parse(INSTALL_URL));
    } else if (choice === "Open settings") {
      void vscode.commands.executeCommand("workbench.action.openSettings", "mzk.server");
    }
    return;
  }
  output.appendLine(`mzk: starting ${server.command} (${server.source})`);
  void noteVersions(context, server.source, around);
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    transport: TransportKind.stdio,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_PATTERNS.map((pattern) => ({ scheme: "file", pattern })),
    outputChannel: output,
    initializationOptions: { run: current.run },
    middleware: {
      // The patterns pre-select by name; only files inside a bundle folder go to the server.
      didOpen: (document, next) =>
        bundleOf(document.uri.fsPath, exists) ? next(document) : Promise.resolve(),
      executeCommand: async (command, args, next) => {
        if (!allowed(command, vscode.workspace.isTrusted)) {
          void vscode.window.showWarningMessage(
            "mzk: workflows do not run in an untrusted workspace (Workspace Trust).",
          );
          return undefined;
        }
        let agent: string | undefined;
        if (AGENT_COMMANDS.includes(command) && args.length === 0) {
          agent = await vscode.window.showInputBox({
            prompt: command === "mzk.showPrompt" ? "Show the prompt of which agent?" : "Run from which agent?",
          });
          if (!agent) return undefined;
        }
        let reply: string | undefined;
        if (command === "mzk.reply" && args.length === 0 && runs.paused) {
          reply = await vscode.window.showInputBox({ prompt: `Reply to run ${runs.paused}`, ignoreFocusOut: true });
          if (reply === undefined) return undefined;
        }
        const mapped = commandArguments(
          command,
          args,
          vscode.window.activeTextEditor?.document.uri.fsPath,
          exists,
          agent,
          runs,
          reply,
        );
        if ("error" in mapped) {
          void vscode.window.showWarningMessage(`mzk: ${mapped.error}`);
          return undefined;
        }
        if (command === "mzk.runWorkflow" || command === "mzk.runFromAgent") {
          // Scenario files of the bundle can script the run; else the configured model answers.
          const folder = path.join(String(mapped.args[0]), "scenarios");
          const files = fs.existsSync(folder)
            ? fs.readdirSync(folder).filter((f) => /\.(ya?ml|json)$/.test(f)).sort()
            : [];
          if (files.length > 0 && !mapped.args.some((a) => typeof a === "object" && a !== null)) {
            const model = `the configured model (${current.run.backend})`;
            const picked = await vscode.window.showQuickPick([model, ...files], { placeHolder: "Run with" });
            if (picked === undefined) return undefined;
            mapped.args = withScenario(mapped.args, picked === model ? undefined : path.join(folder, picked));
          }
          output.show(true);
        }
        if (command === "mzk.showGraph") {
          // The server's graph page, in one panel per bundle.
          await showGraph(String(mapped.args[0]));
          return undefined;
        }
        try {
          const result = await next(command, mapped.args);
          if (command === "mzk.showPrompt" && typeof result === "string") {
            const document = await vscode.workspace.openTextDocument({ content: result, language: "markdown" });
            await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
          }
          return result;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          output.appendLine(`mzk: ${command}: ${message}`);
          void vscode.window.showErrorMessage(`mzk: ${message}`);
          return undefined;
        }
      },
    },
  };
  client = new LanguageClient("mzk", "mzk", serverOptions, clientOptions);
  // Runs from the editor: the server streams events and may ask the user.
  client.onNotification("mzk/runEvent", (params: { runId?: string; event?: { type?: string } }) => {
    output.appendLine(runs.observe(params));
  });
  client.onRequest("mzk/askUser", async (params: { prompt?: string }) => {
    const text = await vscode.window.showInputBox({
      prompt: params?.prompt ?? "The workflow asks for your reply",
      ignoreFocusOut: true,
    });
    return { text: text ?? null };
  });
  await client.start();
}

async function stop(): Promise<void> {
  if (client) {
    const stopping = client;
    client = undefined;
    await stopping.stop();
  }
}

/** The open graph panels, by bundle folder. */
const graphPanels = new Map<string, vscode.WebviewPanel>();

/** Asks the server for the bundle's graph page and shows it in the
 * bundle's panel (made on first use, revealed after). */
async function showGraph(bundle: string): Promise<void> {
  let panel = graphPanels.get(bundle);
  if (!panel) {
    const created = vscode.window.createWebviewPanel(
      "mzk.graph",
      `Graph: ${path.basename(bundle)}`,
      vscode.ViewColumn.Beside,
      // The page is self-contained: scripts, but no local resources.
      { enableScripts: true, localResourceRoots: [] },
    );
    created.onDidDispose(() => graphPanels.delete(bundle));
    // A click on an agent or a rule opens where it is written.
    created.webview.onDidReceiveMessage(async (message: unknown) => {
      const target = openTarget(bundle, message);
      if (!target) return;
      const document = await vscode.workspace.openTextDocument(target.file);
      const at = new vscode.Position(target.line, target.column);
      // The page keeps the focus (its keys, its focus list); the editor shows the place.
      await vscode.window.showTextDocument(document, {
        viewColumn: vscode.ViewColumn.One,
        selection: new vscode.Range(at, at),
        preserveFocus: true,
      });
    });
    graphPanels.set(bundle, created);
    panel = created;
  } else {
    panel.reveal(undefined, true);
  }
  await refreshGraph(bundle);
}

/** Redraws an open panel from the server's current analysis. */
async function refreshGraph(bundle: string): Promise<void> {
  const panel = graphPanels.get(bundle);
  if (!panel || !client) return;
  const nonce = crypto.randomBytes(16).toString("hex");
  try {
    const html: unknown = await client.sendRequest("workspace/executeCommand", {
      command: "mzk.showGraph",
      arguments: graphPageArguments(bundle, nonce),
    });
    if (typeof html === "string") panel.webview.html = html;
  } catch (error) {
    output.appendLine(`mzk: graph of ${bundle}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("mzk", { log: true });
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("mzk.showOutput", () => output.show()),
    vscode.commands.registerCommand("mzk.restartServer", async () => {
      await stop();
      await start(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("mzk.server") || event.affectsConfiguration("mzk.importStrategy")) {
        await stop();
        await start(context);
      }
    }),
    // A saved bundle file redraws that bundle's open graph.
    vscode.workspace.onDidSaveTextDocument(async (document) => {
      const bundle = panelFor(document.uri.fsPath, graphPanels.keys());
      if (bundle) await refreshGraph(bundle);
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      output.appendLine(`mzk: workspace trusted; ${RUN_COMMANDS.join(" and ")} are enabled`);
    }),
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  await stop();
}
