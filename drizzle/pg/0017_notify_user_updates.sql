-- The change feed hears of users changed in place, not only deleted (issue 33, "stale answers"):
-- an update of a name, avatar, email, email_verified, admin flag or disabled mark names the users
-- it changed — "users:<id>,<id>" — so every instance drops those users' cached identity, and
-- userinfo, introspection and the next id_token describe them as they are now. A statement that
-- changed more than 100 users says just "users": empty it all. A password change says nothing.
CREATE FUNCTION latchkey_notify_user_updates() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed text[];
BEGIN
  SELECT array_agg(id) INTO changed FROM (
    SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE (n.email, n.full_name, n.avatar_url, n.email_verified, n.is_admin, n.disabled_at)
      IS DISTINCT FROM (o.email, o.full_name, o.avatar_url, o.email_verified, o.is_admin, o.disabled_at)
    LIMIT 101) AS c;
  IF changed IS NULL THEN
    RETURN NULL;
  ELSIF cardinality(changed) > 100 THEN
    PERFORM pg_notify('latchkey_changes', 'users');
  ELSE
    PERFORM pg_notify('latchkey_changes', 'users:' || array_to_string(changed, ','));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER users_update_notify AFTER UPDATE ON users REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_user_updates();
