-- A revocation names the tokens it deleted: "access_tokens:12,345", so every instance drops
-- those entries and keeps the rest of its token cache. A statement that deleted more than 100
-- valid tokens (a user's or an app's, by hand) still says just "access_tokens": empty it all.
CREATE OR REPLACE FUNCTION latchkey_notify_token_deletes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  valid bigint[];
BEGIN
  SELECT array_agg(id) INTO valid FROM (SELECT id FROM gone WHERE expires_at > now_ms LIMIT 101) AS g;
  IF valid IS NULL THEN
    RETURN NULL;
  ELSIF cardinality(valid) > 100 THEN
    PERFORM pg_notify('latchkey_changes', TG_TABLE_NAME);
  ELSE
    PERFORM pg_notify('latchkey_changes', TG_TABLE_NAME || ':' || array_to_string(valid, ','));
  END IF;
  RETURN NULL;
END $$;
