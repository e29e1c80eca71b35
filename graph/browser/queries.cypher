// newskg saved queries for analysts. Each query starts with a `// name:` line and lists its parameters; set
// them in Neo4j Browser with `:param`, e.g.
//   :param entity_id => "e_…";  :param from_day => 20230501;  :param to_day => 20230531;
//   :param as_of_day => 20230531;  :param as_of_ms => 1685577599999;  :param interaction_id => "i_…";
//   :param day => 20230502;  :param name => "Doja Cat"
// Days are yyyymmdd integers; as_of_ms is the last millisecond of as_of_day (UTC).

// name: find_entity
// params: name
MATCH (e:Entity)
WHERE toLower(e.name) = toLower($name) OR any(a IN coalesce(e.aliases, []) WHERE toLower(a) = toLower($name))
RETURN e.id AS id, e.name AS name, e.type AS type, e.aliases AS aliases
ORDER BY name LIMIT 25;

// name: entity_timeline
// params: entity_id, from_day, to_day, as_of_day, as_of_ms
MATCH (e:Entity {id: $entity_id})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH x
WHERE x.event_day >= $from_day AND x.event_day <= $to_day
  AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
RETURN x.event_iso AS day, x.text AS interaction, x.variant AS variant, x.id AS id
ORDER BY day, id LIMIT 200;

// name: who_interacted_in_week
// params: entity_id, from_day, to_day  (a week: Monday to Sunday)
MATCH (e:Entity {id: $entity_id})-[:SUBJECT_OF]->(x:Interaction)-[:OBJECT]->(o:Entity)
WITH x, o
WHERE x.event_day >= $from_day AND x.event_day <= $to_day
RETURN o.name AS other, o.type AS type, count(x) AS interactions, collect(x.text)[0..3] AS examples
ORDER BY interactions DESC, other LIMIT 50;

// name: sources_behind_fact
// params: interaction_id
MATCH (x:Interaction {id: $interaction_id})-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)-[:FROM]->(s:Source)
RETURN s.name AS source, a.title AS title, a.url AS url, a.published_day AS published_day, c.id AS chunk
ORDER BY published_day, source;

// name: spike_day_subgraph
// params: entity_id, day
MATCH (e:Entity {id: $entity_id})-[r:SUBJECT_OF|OBJECT]-(x:Interaction {event_day: $day})
OPTIONAL MATCH (x)-[q:SUBJECT_OF|OBJECT]-(other:Entity)
RETURN e, r, x, q, other LIMIT 300;
