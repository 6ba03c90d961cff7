-- The audit trail: one row per event, numbered without gaps, each hash-chained to the one
-- before it (see the crate README for the canonical content and the hash).
-- The columns after `kind` are copies of fields of `content`, kept for filtering; `verify()`
-- checks that they agree with it.
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY,
    time_ms     INTEGER NOT NULL,
    session_id  TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    call_id     TEXT,
    tool        TEXT,
    enforcement TEXT,
    decision    TEXT,
    decided_by  TEXT,
    status      TEXT,
    content     TEXT    NOT NULL,
    prev_hash   TEXT    NOT NULL,
    hash        TEXT    NOT NULL
) STRICT;

-- Append-only: changing or removing a row is refused by the database itself.
CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'audit events are append-only: UPDATE refused');
END;

CREATE TRIGGER events_refuse_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'audit events are append-only: DELETE refused');
END;
