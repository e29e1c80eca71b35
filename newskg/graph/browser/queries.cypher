// newskg saved queries for analysts. Each query starts with a `// name:` line and lists its parameters; set
// them in Neo4j Browser with `:param`, e.g.
//   :param entity_id => "e_…";  :param from_day => 20230501;  :param to_day => 20230531;
//   :param as_of_day => 20230531;  :param as_of_ms => 1685577599999;  :param interaction_id => "i_…";
//   :param day => 20230502;  :param name => "Doja Cat"
// Days are yyyymmdd integers; as_of_ms is the last millisecond of as_of_day (UTC). Every query shows the graph
// as it stood at the end of as_of_day: only what was published on or before it and ingested by then, and only
// entities a chunk or interaction of then names, with the aliases first seen by then (an alias is an
// (:Entity)-[:ALIAS]->(:Alias) node dated like a chunk) (for the graph as it stands now: as_of_day 99991231,
// as_of_ms 4611686018427387904).

// name: find_entity
// params: name, as_of_day, as_of_ms
MATCH (e:Entity)
WHERE toLower(e.name) = toLower($name)
WITH collect(e) AS named
OPTIONAL MATCH (other:Entity)-[:ALIAS]->(hit:Alias)
WHERE hit.lower = toLower($name) AND hit.day <= $as_of_day AND hit.ingested_ms <= $as_of_ms
WITH named, collect(other) AS aliased
WITH named + aliased AS found
UNWIND found AS e
WITH DISTINCT e
OPTIONAL MATCH (e)<-[:MENTIONS]-(c:Chunk)
WHERE c.day <= $as_of_day AND c.ingested_ms <= $as_of_ms
WITH e, count(DISTINCT c) AS mentions
OPTIONAL MATCH (e)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WHERE x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
WITH e, mentions, count(DISTINCT x) AS interactions
WHERE mentions > 0 OR interactions > 0
OPTIONAL MATCH (e)-[:ALIAS]->(al:Alias)
WHERE al.day <= $as_of_day AND al.ingested_ms <= $as_of_ms AND al.name <> e.name
RETURN e.id AS id, e.name AS name, e.type AS type, collect(DISTINCT al.name) AS aliases, mentions, interactions
ORDER BY mentions DESC, interactions DESC, name LIMIT 25;

// name: entity_timeline
// params: entity_id, from_day, to_day, as_of_day, as_of_ms  (newest first: the end of the window is never cut)
MATCH (e:Entity {id: $entity_id})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH DISTINCT x
WHERE x.event_day >= $from_day AND x.event_day <= $to_day
  AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
RETURN x.event_iso AS day, x.text AS interaction, x.variant AS variant, x.id AS id
ORDER BY day DESC, id LIMIT 200;

// name: who_interacted_in_week
// params: entity_id, from_day, to_day, as_of_day, as_of_ms  (a week: Monday to Sunday)
MATCH (e:Entity {id: $entity_id})-[:SUBJECT_OF]->(x:Interaction)-[:OBJECT]->(o:Entity)
WITH x, o
WHERE x.event_day >= $from_day AND x.event_day <= $to_day
  AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
RETURN o.name AS other, o.type AS type, count(x) AS interactions, collect(x.text)[0..3] AS examples
ORDER BY interactions DESC, other LIMIT 50;

// name: sources_behind_fact
// params: interaction_id, as_of_day, as_of_ms
MATCH (x:Interaction {id: $interaction_id})-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)-[:FROM]->(s:Source)
WHERE x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
  AND a.published_day <= $as_of_day AND a.ingested_ms <= $as_of_ms
RETURN s.name AS source, a.title AS title, a.url AS url, a.published_day AS published_day, c.id AS chunk
ORDER BY published_day, source;

// name: spike_day_subgraph
// params: entity_id, day, as_of_day, as_of_ms
MATCH (e:Entity {id: $entity_id})-[r:SUBJECT_OF|OBJECT]-(x:Interaction {event_day: $day})
WHERE x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
OPTIONAL MATCH (x)-[q:SUBJECT_OF|OBJECT]-(other:Entity)
RETURN e, r, x, q, other LIMIT 300;
