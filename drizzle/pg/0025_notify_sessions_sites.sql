-- Forward-auth's site-session cache (src/authz/cache.ts) hears what ends or changes a site
-- session on every instance (SPEC "Sessions per site": refused by every instance within 100 ms):
-- sign-in sessions deleted (signing out, "sign out everywhere", a password reset; a site session
-- lives by its sign-in session) and group memberships added or removed (the allowed groups, the
-- Remote-Groups header) name their users — "sessions:<id>,<id>" — so each instance drops those
-- users' cached site sessions and keeps the rest. More than 100 users in one statement say just
-- "sessions": the site-session cache empties, the other caches stay. Expired sessions (the purge)
-- say nothing: a cached site session is refused by its own expiry. Disabling or deleting a user
-- is heard already (drizzle/pg/0001, 0017). Sites and their rules, changed at all: "sites".
CREATE FUNCTION latchkey_notify_session_users() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  named text[];
BEGIN
  IF TG_TABLE_NAME = 'sessions' THEN
    SELECT array_agg(user_id) INTO named FROM (SELECT DISTINCT user_id FROM changed WHERE expires_at > now_ms LIMIT 101) AS c;
  ELSE
    SELECT array_agg(user_id) INTO named FROM (SELECT DISTINCT user_id FROM changed LIMIT 101) AS c;
  END IF;
  IF named IS NULL THEN
    RETURN NULL;
  ELSIF cardinality(named) > 100 THEN
    PERFORM pg_notify('latchkey_changes', 'sessions');
  ELSE
    PERFORM pg_notify('latchkey_changes', 'sessions:' || array_to_string(named, ','));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER sessions_delete_notify AFTER DELETE ON sessions REFERENCING OLD TABLE AS changed
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_session_users();
--> statement-breakpoint
CREATE TRIGGER group_members_insert_notify AFTER INSERT ON group_members REFERENCING NEW TABLE AS changed
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_session_users();
--> statement-breakpoint
CREATE TRIGGER group_members_delete_notify AFTER DELETE ON group_members REFERENCING OLD TABLE AS changed
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_session_users();
--> statement-breakpoint
CREATE FUNCTION latchkey_notify_sites() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('latchkey_changes', 'sites');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER sites_notify AFTER INSERT OR UPDATE OR DELETE ON sites
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_sites();
