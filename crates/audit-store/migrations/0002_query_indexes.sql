-- Indexes for the audit viewer's filters. Each ends in `seq` so that a filtered page is read
-- newest-first straight from the index (keyset pagination on `seq`).
CREATE INDEX events_by_session     ON events (session_id, seq);
CREATE INDEX events_by_tool        ON events (tool, enforcement, seq);
CREATE INDEX events_by_enforcement ON events (enforcement, seq);
CREATE INDEX events_by_status      ON events (status, seq);
CREATE INDEX events_by_decision    ON events (decision, seq);
CREATE INDEX events_by_call        ON events (call_id, seq);
CREATE INDEX events_by_time        ON events (time_ms);
