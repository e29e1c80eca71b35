// Neo4j's own Cypher front-end (parser + semantic analysis from @neo4j-cypher/language-support), offline, over
// many statements in one Node process.
//
// stdin:  {"version": "CYPHER 5", "schema": {labels?, relationshipTypes?, propertyKeys?},
//          "statements": [{"name": "...", "query": "...", "parameters": {...} | null}]}
// stdout: [{"name": "...", "diagnostics": [{"severity": 1, "message": "...", "start": 0, "end": 5}]}]
//
// A statement with `parameters` is linted with those parameters declared, so a `$name` the caller does not pass is
// a diagnostic (Neo4j fails such a query at run time). A statement without them (a static registry entry: its
// values come from the caller) is linted with undeclared-parameter diagnostics removed (`isNotParamError`).
// Functions and procedures are checked against Neo4j's built-in registry as the package ships it (its test data
// is a SHOW FUNCTIONS / SHOW PROCEDURES dump of a real server; plugins such as APOC are left out), so a
// FalkorDB-only function is reported as unknown.
import { isNotParamError, lintCypherQuery, testData } from '@neo4j-cypher/language-support';

function builtIns(registry) {
  const scoped = {};
  for (const [version, entries] of Object.entries(registry ?? {})) {
    scoped[version] = Object.fromEntries(Object.entries(entries).filter(([, entry]) => entry.isBuiltIn === true));
  }
  return scoped;
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const request = await readStdin();
const baseSchema = {
  ...(request.schema ?? {}),
  defaultLanguage: request.version ?? 'CYPHER 5',
  functions: builtIns(testData.mockSchema.functions),
  procedures: builtIns(testData.mockSchema.procedures),
};

const results = request.statements.map(({ name, query, parameters }) => {
  const declared = parameters !== null && parameters !== undefined;
  const schema = { ...baseSchema, parameters: declared ? parameters : {} };
  const { diagnostics } = lintCypherQuery(query, schema, { consoleCommandsEnabled: false });
  return {
    name,
    diagnostics: diagnostics
      .filter((d) => declared || isNotParamError(d))
      .map((d) => ({ severity: d.severity, message: d.message, start: d.offsets.start, end: d.offsets.end })),
  };
});
process.stdout.write(JSON.stringify(results));
