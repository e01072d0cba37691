package pgstore

// migrations are the schema's versions, applied in order, each in the
// transaction that records it in schema_migrations. A version is never
// changed once released: a change to the schema is a new one appended
// here (doc.go, "Schema").
var migrations = []string{
	1: `
CREATE TABLE flow_head (
	one     boolean PRIMARY KEY DEFAULT true CHECK (one),
	seq     bigint NOT NULL,
	hash    bytea  NOT NULL,
	time_ns bigint NOT NULL
);
INSERT INTO flow_head (seq, hash, time_ns) VALUES (0, '\x0000000000000000000000000000000000000000000000000000000000000000', 0);

CREATE TABLE flow_events (
	seq         bigint PRIMARY KEY,
	id          bytea  NOT NULL UNIQUE,
	stream      text   NOT NULL,
	version     bigint NOT NULL,
	type        text   NOT NULL,
	schema      bigint NOT NULL,
	time_ns     bigint NOT NULL,
	actor       text   NOT NULL,
	session     text   NOT NULL,
	project     text   NOT NULL,
	correlation bytea,
	causation   bytea,
	data        bytea,
	prev        bytea  NOT NULL,
	hash        bytea  NOT NULL,
	UNIQUE (stream, version)
);
CREATE INDEX flow_events_project ON flow_events (project, seq);

CREATE FUNCTION flow_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'flow_events is append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER flow_events_append_only BEFORE UPDATE OR DELETE ON flow_events
	FOR EACH ROW EXECUTE FUNCTION flow_events_append_only();
CREATE TRIGGER flow_events_no_truncate BEFORE TRUNCATE ON flow_events
	FOR EACH STATEMENT EXECUTE FUNCTION flow_events_append_only();

CREATE TABLE flow_streams (
	stream  text   PRIMARY KEY,
	version bigint NOT NULL,
	seq     bigint NOT NULL
);

CREATE TABLE flow_kv (
	bucket text  NOT NULL,
	key    bytea NOT NULL,
	value  bytea NOT NULL,
	PRIMARY KEY (bucket, key)
);
`,
}

// schemaVersion is the newest schema this binary knows.
var schemaVersion = len(migrations) - 1

const createMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
)`
