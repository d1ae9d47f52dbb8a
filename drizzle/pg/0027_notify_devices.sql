-- The pending device codes' cache (src/db/device-cache.ts) hears every change to a device code on
-- every instance (issue 38: a device polls whichever instance the balancer picks; the one where
-- its person allowed is not the one it asks): rows updated (a decision, a slow_down, the poll that
-- used the code) or deleted (a purge, a cascade) say "devices", and each instance empties that
-- cache — a device code is read again at its next poll. A statement that changed no row says
-- nothing. Inserted rows are not told: a new code was never cached.
CREATE FUNCTION latchkey_notify_devices() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM changed) THEN
    PERFORM pg_notify('latchkey_changes', 'devices');
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER device_codes_update_notify AFTER UPDATE ON device_codes REFERENCING OLD TABLE AS changed
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_devices();
--> statement-breakpoint
CREATE TRIGGER device_codes_delete_notify AFTER DELETE ON device_codes REFERENCING OLD TABLE AS changed
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_devices();
