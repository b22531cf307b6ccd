// Unit tests of the language client (src/extension.ts) with fake `vscode` and
// `vscode-languageclient/node` modules: which command it starts, how the
// settings change it, and what a missing `tilec` looks like. Run by
// `npm run test:client` (scripts/test.sh), on a bundle built with both
// modules left external.
"use strict";
const test = require("node:test");
const assert = require("node:assert");
const Module = require("node:module");
const path = require("node:path");

function fakes(settings) {
  const log = { clients: [], errors: [], commands: {}, configListeners: [] };
  const vscode = {
    workspace: {
      getConfiguration: (section) => ({
        get: (key, fallback) => {
          const value = settings[`${section}.${key}`];
          return value === undefined ? fallback : value;
        },
      }),
      onDidChangeConfiguration: (fn) => {
        log.configListeners.push(fn);
        return { dispose() {} };
      },
    },
    window: {
      createOutputChannel: (name) => ({ name, appendLine() {}, dispose() {} }),
      showErrorMessage: async (message) => {
        log.errors.push(message);
      },
    },
    commands: {
      registerCommand: (id, fn) => {
        log.commands[id] = fn;
        return { dispose() {} };
      },
    },
  };
  class LanguageClient {
    constructor(id, name, serverOptions, clientOptions) {
      Object.assign(this, { id, name, serverOptions, clientOptions, started: false, stopped: false });
      log.clients.push(this);
    }
    async start() {
      if (settings.failStart) throw new Error("spawn tilec ENOENT");
      this.started = true;
    }
    async stop() {
      this.stopped = true;
    }
  }
  const languageclient = { LanguageClient, TransportKind: { stdio: 0 } };
  return { log, vscode, languageclient };
}

function load(settings) {
  const f = fakes(settings);
  const original = Module._load;
  Module._load = function (request, parent, isMain) {
    if (request === "vscode") return f.vscode;
    if (request === "vscode-languageclient/node") return f.languageclient;
    return original.call(this, request, parent, isMain);
  };
  const file = path.join(__dirname, "..", "..", "out", "test", "extension.js");
  delete require.cache[require.resolve(file)];
  try {
    return { ext: require(file), ...f };
  } finally {
    Module._load = original;
  }
}

const context = () => ({ subscriptions: [] });

test("starts `tilec lsp` from PATH by default, for tile documents", async () => {
  const { ext, log } = load({});
  await ext.activate(context());
  assert.strictEqual(log.clients.length, 1);
  const client = log.clients[0];
  assert.ok(client.started);
  assert.deepStrictEqual(client.serverOptions.run.command, "tilec");
  assert.deepStrictEqual(client.serverOptions.run.args, ["lsp"]);
  // With a `transport` the real client would append `--stdio` to the args.
  assert.strictEqual(client.serverOptions.run.transport, undefined);
  const languages = client.clientOptions.documentSelector.map((s) => s.language);
  assert.deepStrictEqual([...new Set(languages)], ["tile"]);
});

test("tile.server.path and extraArgs choose the executable", async () => {
  const { ext, log } = load({
    "tile.server.path": "/opt/venv/bin/tilec",
    "tile.server.extraArgs": ["--some-flag"],
  });
  await ext.activate(context());
  assert.strictEqual(log.clients[0].serverOptions.run.command, "/opt/venv/bin/tilec");
  assert.deepStrictEqual(log.clients[0].serverOptions.run.args, ["lsp", "--some-flag"]);
});

test("a missing tilec is reported, naming the setting", async () => {
  const { ext, log } = load({ failStart: true, "tile.server.path": "nope" });
  await ext.activate(context());
  assert.strictEqual(log.errors.length, 1);
  assert.match(log.errors[0], /nope lsp/);
  assert.match(log.errors[0], /tile\.server\.path/);
});

test("the server can be disabled, restarted, and follows setting changes", async () => {
  const settings = { "tile.server.enabled": false };
  const { ext, log } = load(settings);
  await ext.activate(context());
  assert.strictEqual(log.clients.length, 0);

  settings["tile.server.enabled"] = true;
  await log.commands["tile.restartServer"]();
  assert.strictEqual(log.clients.length, 1);

  settings["tile.server.path"] = "/other/tilec";
  await log.configListeners[0]({ affectsConfiguration: (s) => s === "tile.server" });
  assert.strictEqual(log.clients.length, 2);
  assert.ok(log.clients[0].stopped);
  assert.strictEqual(log.clients[1].serverOptions.run.command, "/other/tilec");

  await log.configListeners[0]({ affectsConfiguration: () => false });
  assert.strictEqual(log.clients.length, 2);
  await ext.deactivate();
  assert.ok(log.clients[1].stopped);
});
