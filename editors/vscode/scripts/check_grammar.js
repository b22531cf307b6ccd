// CI's freshness check of the grammar without Python's PyYAML: the committed
// tile.tmLanguage.json must equal what tile.tmLanguage.yaml says. (The exact
// text is checked by `build_grammar.py --check` and by tests/editors/.)
"use strict";
const fs = require("fs");
const path = require("path");
const assert = require("assert");
const yaml = require("js-yaml");

const dir = path.join(__dirname, "..", "syntaxes");
const authored = yaml.load(fs.readFileSync(path.join(dir, "tile.tmLanguage.yaml"), "utf8"));
const shipped = JSON.parse(fs.readFileSync(path.join(dir, "tile.tmLanguage.json"), "utf8"));
try {
  assert.deepStrictEqual(shipped, authored);
} catch (err) {
  console.error("tile.tmLanguage.json is stale: run python3 editors/vscode/scripts/build_grammar.py");
  process.exit(1);
}
