// The Tile language client: starts `tilec lsp` over stdio and connects it to
// the editor. Highlighting, brackets and snippets are declarative (package.json)
// and work without the server; everything semantic comes from the server.

import * as vscode from "vscode";
import {
  Executable,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel | undefined;

function serverOptions(): ServerOptions {
  const config = vscode.workspace.getConfiguration("tile");
  const command = config.get<string>("server.path", "tilec") || "tilec";
  const extra = config.get<string[]>("server.extraArgs", []);
  // No `transport`: with `TransportKind.stdio` the client would append
  // `--stdio`; plain stdio is what `tilec lsp` speaks (it accepts the flag too).
  const executable: Executable = { command, args: ["lsp", ...extra] };
  return { run: executable, debug: executable };
}

async function start(_context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("tile");
  if (!config.get<boolean>("server.enabled", true)) {
    return;
  }
  output ??= vscode.window.createOutputChannel("Tile Language Server", { log: true });
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "tile" },
      { scheme: "untitled", language: "tile" },
    ],
    outputChannel: output,
    traceOutputChannel: output,
  };
  client = new LanguageClient("tile", "Tile Language Server", serverOptions(), clientOptions);
  try {
    await client.start();
  } catch (err) {
    const path = config.get<string>("server.path", "tilec");
    void vscode.window.showErrorMessage(
      `Tile: could not start \`${path} lsp\` (${String(err)}). ` +
        "Install tilec (`pip install -e .` in the Tile checkout) or set `tile.server.path`.",
    );
    client = undefined;
  }
}

async function stop(): Promise<void> {
  if (client) {
    const running = client;
    client = undefined;
    await running.stop();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("tile.restartServer", async () => {
      await stop();
      await start(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("tile.server")) {
        await stop();
        await start(context);
      }
    }),
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  await stop();
}
