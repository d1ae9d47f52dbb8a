-- The client cache (src/db/pg/client-cache.ts) hears every change to a client row on every
-- instance (issue 38: a rotated secret or a changed client is refused by every instance within
-- the feed's delivery, ~100 ms): rows inserted or updated — by any column, any path: the CLI,
-- /admin, apply, dynamic registration and its management API, a metadata document fetched
-- again — name their clients, "clients:" and a JSON array of ids (ids may be URLs: commas in
-- them), so each instance drops those and keeps the rest. More than 100 clients in one
-- statement, or a payload too long for NOTIFY's 8000 bytes, say "clients:*": the client cache
-- empties, the other caches stay. Deleted clients are heard already (drizzle/pg/0001: every
-- cache empties, their grants went with them). Nothing frequent writes `clients` (no last-used
-- stamp): a token request changes no client row.
CREATE FUNCTION latchkey_notify_clients() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  named text[];
  payload text;
BEGIN
  SELECT array_agg(id) INTO named FROM (SELECT DISTINCT id FROM changed LIMIT 101) AS c;
  IF named IS NULL THEN
    RETURN NULL;
  END IF;
  payload := 'clients:' || to_json(named)::text;
  IF cardinality(named) > 100 OR octet_length(payload) > 7900 THEN
    payload := 'clients:*';
  END IF;
  PERFORM pg_notify('latchkey_changes', payload);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER clients_insert_notify AFTER INSERT ON clients REFERENCING NEW TABLE AS changed
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_clients();
--> statement-breakpoint
CREATE TRIGGER clients_update_notify AFTER UPDATE ON clients REFERENCING OLD TABLE AS changed
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_clients();
--> statement-breakpoint
-- A resource registered (resource create, apply, /admin) is heard as a changed or deleted one is
-- (0010, 0012): each instance reads its list of resources again, where a client_credentials request
-- naming only scopes finds its audience.
CREATE TRIGGER resources_insert_notify AFTER INSERT ON resources REFERENCING NEW TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_deletes();
