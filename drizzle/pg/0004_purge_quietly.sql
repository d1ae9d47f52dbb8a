-- Deleting expired access tokens (the purge) changes nothing a cache holds: an expired token is
-- refused by its cached expiry. Only deletions of still-valid tokens notify, so every
-- instance's purge no longer empties every instance's token cache each minute.
CREATE FUNCTION latchkey_notify_token_deletes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM gone WHERE expires_at > (extract(epoch FROM clock_timestamp()) * 1000)::bigint) THEN
    PERFORM pg_notify('latchkey_changes', TG_TABLE_NAME);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER access_tokens_notify ON access_tokens;
--> statement-breakpoint
CREATE TRIGGER access_tokens_notify AFTER DELETE ON access_tokens REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_token_deletes();
