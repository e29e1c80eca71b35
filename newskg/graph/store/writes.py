"""Batched, idempotent writes (UNWIND … MERGE), one statement per kind, shared by Neo4j 5 and FalkorDB.
Every value arrives as a parameter; no text is ever pasted into the Cypher."""

# An article id is its canonical URL, so one article may be read twice with other times (fetched live, then
# backfilled at its publication). Like a chunk it keeps the record the system could show first (least first_key),
# whole, in any order: its chunk and facts are dated by that record, and "as of D" must find it as their source.
# A node written before first_key existed (published_day set, first_key null) keeps its times (`<` on null is
# not true).
# Its url, title and source are that first record's too (a refetch may carry another title or tracking
# parameters): never whichever record arrived first. A source's name is the least spelling of its id seen (a
# source id is its normalised name), so every order of arrival names it the same.
ARTICLES = """
UNWIND $rows AS a
MERGE (s:Source {id: a.source_id})
SET s.name = CASE WHEN s.name IS NULL OR a.source < s.name THEN a.source ELSE s.name END
MERGE (ar:Article {id: a.id})
MERGE (ar)-[:FROM]->(s)
WITH ar, a
WHERE ar.published_day IS NULL OR a.first_key < ar.first_key
SET ar.published = a.published, ar.published_day = a.day, ar.ingested_at = a.ingested_at,
    ar.ingested_ms = a.ingested_ms, ar.first_key = a.first_key, ar.url = a.url, ar.title = a.title,
    ar.source_id = a.source_id
"""

# A chunk id is the hash of its normalised text, so two records may carry the same id (two replicas kept the same
# text, a backfill re-dated it). Whatever order they arrive in, the node ends the same: it holds one record whole,
# the one the system could show first — the least `first_key` (store.first_key: the day the record became
# visible, max(published day, ingested day), then its published day, instant, ingestion and article id). Times
# are never mixed across records: a backfill's early publication day with a live record's early ingestion
# would make the chunk visible on a day when neither record was (the as-of invariant). Rows of one
# statement do not see each other's writes (FalkorDB), so the store folds duplicate ids of a batch first
# (store.fold_chunk_rows). The IN edges are not folded: `c.articles` holds one entry per record of the id in the
# batch (the article that carried it, with that record's day and ingestion), each MERGEd as before.
CHUNKS = """
UNWIND $rows AS c
MERGE (ch:Chunk {id: c.id})
WITH ch, c, (ch.first_key IS NULL OR c.first_key < ch.first_key) AS first
FOREACH (_ IN CASE WHEN first THEN [1] ELSE [] END |
  SET ch.text = c.text, ch.day = c.day, ch.published = c.published, ch.sentence_start = c.sentence_start,
      ch.sentence_end = c.sentence_end, ch.article_id = c.article_id, ch.source = c.source,
      ch.source_id = c.source_id, ch.url = c.url, ch.title = c.title, ch.marked = c.marked,
      ch.ingested_ms = c.ingested_ms, ch.ingested_at = c.ingested_at, ch.ingested_day = c.ingested_day,
      ch.first_key = c.first_key)
WITH ch, c
UNWIND c.articles AS a
MATCH (ar:Article {id: a.article_id})
MERGE (ch)-[r:IN]->(ar) ON CREATE SET r.day = a.day, r.ingested_ms = a.ingested_ms, r.similarity = a.similarity
"""

# An entity row is what one record (a linked chunk) says of it (core/records.Entity, folded per batch by
# store._entity_rows). Like a chunk, the node keeps the first record's values in any order of arrival (issue #29):
# its type is that of the record visible first (least `type_key`: store.first_key of the record's times, the type
# breaking a tie), its name that of the record visible first among those that spelled the name (`name_key`; a
# record that linked the entity by an alias only gives its name just to create the node), so case variants and
# partition interleavings cannot change either. Each alias is an (:Alias) node of the entity, dated like a chunk
# by the record visible first that showed it (`day`, `ingested_ms`; reads filter it with reads.visible): an alias
# first seen on day 20 is not the entity's name as of day 10. `lower` (an alias's, and the entity's of its name,
# set with it) is the engine's own toLower, indexed for reads.ENTITY_FIND.
# `names_ms` is the graph server's clock (timestamp(): one clock, whichever process writes) whenever what the
# QA resolver's name index holds of the entity changes: it is created or renamed, or an alias of it is created or
# re-dated. A resolver's refresh reads only the entities stamped since its last read (reads.ENTITY_NAMES_SINCE).
ENTITIES = """
UNWIND $rows AS e
MERGE (n:Entity {id: e.id})
ON CREATE SET n.name = e.name, n.lower = toLower(e.name), n.names_ms = timestamp()
SET n.description = coalesce(e.description, n.description)
WITH n, e, (n.type_key IS NULL OR e.type_key < n.type_key) AS typed,
     (e.name_key IS NOT NULL AND (n.name_key IS NULL OR e.name_key < n.name_key)) AS named
FOREACH (_ IN CASE WHEN typed THEN [1] ELSE [] END | SET n.type = e.type, n.type_key = e.type_key)
FOREACH (_ IN CASE WHEN named THEN [1] ELSE [] END |
  SET n.name = e.name, n.lower = toLower(e.name), n.name_key = e.name_key, n.names_ms = timestamp())
WITH n, e
UNWIND e.aliases AS alias
MERGE (a:Alias {id: alias.id})
ON CREATE SET a.entity_id = n.id, a.name = alias.name, a.lower = toLower(alias.name)
WITH n, a, alias, (a.first_key IS NULL OR alias.first_key < a.first_key) AS first
FOREACH (_ IN CASE WHEN first THEN [1] ELSE [] END |
  SET a.day = alias.day, a.ingested_ms = alias.ingested_ms, a.first_key = alias.first_key, n.names_ms = timestamp())
MERGE (n)-[:ALIAS]->(a)
"""

# One row per chunk with the entities it mentions: the chunk is looked up once, not once per mention. The facts
# the chunk already states are then ABOUT each entity (see INTERACTIONS): its mentions may arrive after its facts.
# DISTINCT: two chunks of the batch stating one fact and mentioning one entity make one edge.
MENTIONS = """
UNWIND $rows AS m
MATCH (ch:Chunk {id: m.chunk_id})
UNWIND m.entity_ids AS eid
MATCH (n:Entity {id: eid})
MERGE (ch)-[:MENTIONS]->(n)
WITH ch, n
MATCH (x:Interaction)-[:EVIDENCE]->(ch)
WITH DISTINCT x, n, n.id + '|' + toString(x.event_day) AS key
WHERE key <> coalesce(x.subject_day, '') AND key <> coalesce(x.object_day, '')
MERGE (x)-[:ABOUT {key: key}]->(n)
"""

# An interaction's id does not hold its publication: the same fact read in two chunks is one node. Like a chunk
# it is dated by one record whole — the one visible first (store.first_key) — never by the first publication of
# one record and the first ingestion of another; its evidence is the union of every record's chunks. Its text (the
# id holds it normalised: case and spacing may differ) and confidence are that first record's too: as of D a fact
# shows what the chunks of D said of it, and the same in any order. `subject_day` and `object_day` ("<entity
# id>|<event day>", indexed) are set with the SUBJECT_OF and OBJECT edges on every write (a redelivery mends a
# missing one), so they name exactly the entities those edges do: an entity's facts of a few days are an index
# lookup per day (reads.TIMELINE_BY_DAYS), not a walk over every fact it ever took part in. `subject_cell` and
# `object_cell` ("<entity id>|<published day>|<ingested day>", indexed) are set with them, after the first record's
# times: the fact's cells in the daily fact counts (graph/store/factdays.py), which the writer recounts after this.
# A fact is ABOUT every entity an evidence chunk of it mentions, other than those its keys name (the read finds
# those by the keys), keyed like them by "<entity id>|<event day>" (indexed): the facts a chunk states about an
# entity in a few days are an index lookup per day too, not a walk over every chunk that ever mentioned it. An
# index of candidates only: the read checks each against the chunks (reads.TIMELINE_BY_DAYS). The edges follow
# the MERGE of the evidence (and MENTIONS those of the mentions), so on Neo4j the lock the new edge takes on the
# chunk orders two writers of one chunk's evidence and mentions: the second sees the first's edge.
INTERACTIONS = """
UNWIND $rows AS i
MATCH (s:Entity {id: i.subject_id})
MERGE (x:Interaction {id: i.id})
  ON CREATE SET x.event_day = i.event_day, x.event_iso = i.event_iso, x.variant = i.variant,
                x.subject_id = i.subject_id, x.object_id = i.object_id
WITH s, x, i, (x.first_key IS NULL OR i.first_key < x.first_key) AS first
FOREACH (_ IN CASE WHEN first THEN [1] ELSE [] END |
  SET x.text = i.text, x.published_day = i.published_day, x.published_iso = i.published_iso,
      x.ingested_ms = i.ingested_ms, x.ingested_day = i.ingested_day,
      x.ingested_at = i.ingested_at, x.first_key = i.first_key, x.confidence = i.confidence)
MERGE (s)-[:SUBJECT_OF]->(x)
SET x.subject_day = s.id + '|' + toString(x.event_day)
SET x.subject_cell = s.id + '|' + toString(x.published_day) + '|' + toString(x.ingested_day)
WITH s, x, i
OPTIONAL MATCH (o:Entity {id: i.object_id})
FOREACH (_ IN CASE WHEN o IS NULL THEN [] ELSE [1] END |
  MERGE (x)-[:OBJECT]->(o) SET x.object_day = o.id + '|' + toString(x.event_day)
  SET x.object_cell = o.id + '|' + toString(x.published_day) + '|' + toString(x.ingested_day))
WITH x, i, [s.id, coalesce(o.id, s.id)] AS keyed
UNWIND i.chunk_ids AS cid
MATCH (ch:Chunk {id: cid})
MERGE (x)-[:EVIDENCE]->(ch)
WITH x, ch, keyed
MATCH (ch)-[:MENTIONS]->(m:Entity)
WITH DISTINCT x, m, keyed
WHERE NOT m.id IN keyed
MERGE (x)-[:ABOUT {key: m.id + '|' + toString(x.event_day)}]->(m)
"""

SIGHTING_CHUNKS = """
UNWIND $rows AS c
MERGE (ch:Chunk {id: c.id})
WITH ch, c
MATCH (ar:Article {id: c.article_id})
MERGE (ch)-[r:IN]->(ar) ON CREATE SET r.similarity = c.similarity
"""

M2_BATCHES = """
UNWIND $rows AS b
MERGE (m:M2Batch {id: b.id}) ON CREATE SET m.pair = b.pair, m.size = size(b.chunk_ids)
WITH m, b
UNWIND b.chunk_ids AS cid
MATCH (c:Chunk {id: cid})
MERGE (m)-[:COVERS]->(c)
"""

# The linker's journal of a chunk record (extract/entities/journal.py), written last in its batch: present means
# the chunk was written whole (for its article: extract/stage.py). Internal state of the extract stage: not
# exported, not read by any as-of path.
LINKING_JOURNALS = """
UNWIND $rows AS j
MERGE (l:Linking {id: j.id})
ON CREATE SET l.chunk_id = j.chunk_id, l.article_id = j.article_id, l.order = j.order, l.body = j.body
"""
