-- The demo database behind the Tasks widget; Helm creates it at first run.
CREATE TABLE tasks (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('open', 'done')),
  due TEXT
);
INSERT INTO tasks (title, status, due) VALUES
  ('Try the Notes widget', 'open', '2026-01-05'),
  ('Add a database profile of your own', 'open', '2026-01-09'),
  ('Review an extension before enabling it', 'open', NULL),
  ('Start Helm', 'done', NULL),
  ('Read the connection contract', 'done', NULL);
