#!/usr/bin/env bash
# Install the Node packages of package-lock.json (exactly, `npm ci`), Node and npm first when the machine has none
# (Debian: apt nodejs npm).
#   scripts/setup_node.sh explore  `make explore`: the dependencies only (`npm ci --omit=dev`): cytoscape, the
#                                  explorer's graph library (/explore/cytoscape.min.js); nothing when the locked
#                                  version is already there (a full install has it too)
#   scripts/setup_node.sh full     `make setup`: also the devDependencies: Neo4j's own Cypher front-end
#                                  (@neo4j-cypher/language-support), which tests/integration/test_neo4j_dialect.py
#                                  runs over every statement; it needs Node >= 20
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-full}
case "$MODE" in
  explore | full) ;;
  *) echo "usage: scripts/setup_node.sh [explore|full]" >&2; exit 2 ;;
esac
source scripts/apt_install.sh
apt_install node:nodejs npm:npm

locked() {  # the version package-lock.json pins for node_modules/NAME
  node -p "require('./package-lock.json').packages['node_modules/$1'].version"
}

installed() {  # the version installed in node_modules/NAME, empty when none
  node -p "try { require('./node_modules/$1/package.json').version } catch (e) { '' }"
}

if [ "$MODE" = explore ]; then
  if [ "$(installed cytoscape)" = "$(locked cytoscape)" ] && [ -f node_modules/cytoscape/dist/cytoscape.min.js ]; then
    echo "setup (node explore): cytoscape $(locked cytoscape) already installed"
    exit 0
  fi
  npm ci --omit=dev --no-audit --no-fund --loglevel=error
  echo "setup (node explore): done (node $(node --version), cytoscape $(installed cytoscape))"
  exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "setup: Node >= 20 is needed for Neo4j's Cypher front-end, found $(node --version)" >&2
  exit 1
fi
# The package declares engines node >= 24.11.1, but its linter runs on Node 20 (tested here): npm warns only.
npm ci --no-audit --no-fund --loglevel=error
echo "setup (node): done (node $(node --version), @neo4j-cypher/language-support $(installed @neo4j-cypher/language-support), cytoscape $(installed cytoscape))"
