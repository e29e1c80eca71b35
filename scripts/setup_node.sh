#!/usr/bin/env bash
# Install the Node packages the tests need (package-lock.json, exactly): Neo4j's own Cypher front-end
# (@neo4j-cypher/language-support), which tests/integration/test_neo4j_dialect.py runs over every statement.
# Node >= 20 and npm come from the machine (Debian: apt install nodejs npm).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup: node and npm are needed for the Neo4j dialect tests (apt install nodejs npm)" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "setup: Node >= 20 is needed, found $(node --version)" >&2
  exit 1
fi
# The package declares engines node >= 24.11.1, but its linter runs on Node 20 (tested here): npm warns only.
npm ci --no-audit --no-fund --loglevel=error
echo "setup (node): done (node $(node --version), $(node -p "require('./package-lock.json').packages['node_modules/@neo4j-cypher/language-support'].version"))"
