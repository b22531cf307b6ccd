#!/usr/bin/env bash
# Editor checks for CI (called from .ci/run): the TextMate grammar is fresh and
# passes its unit tests, the client type-checks and passes its tests (fake
# vscode module), and the .vsix builds.
# Installs its own npm dependencies from package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

npm ci --no-audit --no-fund --loglevel=error
node scripts/check_grammar.js
npm run --silent test:grammar
npm run --silent typecheck
npm run --silent test:client >/dev/null
npm run --silent package >/dev/null
test -s tile.vsix
echo "editors/vscode: grammar tests, client tests, typecheck and package ok"
