-- setting_counts stays exact, as on SQLite: keys per (user, application) and their values'
-- bytes, through inserts, replacements, deletes and cascades.
CREATE FUNCTION latchkey_count_settings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO setting_counts (user_id, client_id, n, bytes) VALUES (NEW.user_id, NEW.client_id, 1, octet_length(NEW.value))
    ON CONFLICT (user_id, client_id) DO UPDATE SET n = setting_counts.n + 1, bytes = setting_counts.bytes + excluded.bytes;
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE setting_counts SET bytes = bytes + octet_length(NEW.value) - octet_length(OLD.value)
    WHERE user_id = NEW.user_id AND client_id = NEW.client_id;
  ELSE
    UPDATE setting_counts SET n = n - 1, bytes = bytes - octet_length(OLD.value)
    WHERE user_id = OLD.user_id AND client_id = OLD.client_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER settings_count AFTER INSERT OR UPDATE OF value OR DELETE ON settings
FOR EACH ROW EXECUTE FUNCTION latchkey_count_settings();
--> statement-breakpoint
-- The change feed: every instance LISTENs on latchkey_changes and empties its caches when
-- tokens, users or clients are deleted — by any instance, the CLI, a purge or by hand. Only
-- statements that removed rows notify (a purge that removed nothing says nothing).
CREATE FUNCTION latchkey_notify_deletes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM gone) THEN
    PERFORM pg_notify('latchkey_changes', TG_TABLE_NAME);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER access_tokens_notify AFTER DELETE ON access_tokens REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_deletes();
--> statement-breakpoint
CREATE TRIGGER users_notify AFTER DELETE ON users REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_deletes();
--> statement-breakpoint
CREATE TRIGGER clients_notify AFTER DELETE ON clients REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_deletes();
