-- Issue 24: a settings write or deletion in one round trip from the instance. The rules the
-- SQLite engine decides in code (src/db/port/settings.ts: judgeSave, judgePreconditions) are
-- decided here, on the locked state, in one call; the tests run both engines against them.
--
-- An If-Match / If-None-Match arrives normalized: '*' (the header was *), or the header's tags
-- each trimmed and joined with ','. The ETag is etagOf: the first 27 characters of the base64url
-- SHA-256 of "updated_at:value", in double quotes.
CREATE FUNCTION latchkey_etag_matches(header text, etag text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN header = '*' THEN etag IS NOT NULL
    ELSE etag IS NOT NULL AND etag = ANY (string_to_array(header, ',')) END
$$;
--> statement-breakpoint
CREATE FUNCTION latchkey_setting_refusal(p_value text, p_updated_at bigint, p_if_match text, p_if_none_match text) RETURNS text
LANGUAGE sql STABLE AS $$
  WITH e AS (SELECT CASE WHEN p_value IS NOT NULL THEN
      '"' || left(translate(encode(sha256(convert_to(p_updated_at || ':' || p_value, 'UTF8')), 'base64'), '+/=', '-_'), 27) || '"' END AS etag)
  SELECT CASE WHEN p_if_match IS NOT NULL AND NOT latchkey_etag_matches(p_if_match, etag) THEN 'if-match'
    WHEN p_if_none_match IS NOT NULL AND latchkey_etag_matches(p_if_none_match, etag) THEN 'if-none-match' END FROM e
$$;
--> statement-breakpoint
-- The (user, app)'s next revision, the key's tombstone laid or lifted, and the NOTIFY every
-- instance hears once the transaction commits (never before).
CREATE FUNCTION latchkey_next_setting_revision(p_user text, p_client text, p_key text, p_now bigint, p_tombstone text, p_channel text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  rev bigint;
BEGIN
  INSERT INTO setting_heads AS h (user_id, client_id, revision) VALUES (p_user, p_client, 1)
    ON CONFLICT (user_id, client_id) DO UPDATE SET revision = h.revision + 1 RETURNING h.revision INTO rev;
  IF p_tombstone = 'bury' THEN
    INSERT INTO setting_tombstones (user_id, client_id, key, revision, deleted_at) VALUES (p_user, p_client, p_key, rev, p_now)
      ON CONFLICT (user_id, client_id, key) DO UPDATE SET revision = excluded.revision, deleted_at = excluded.deleted_at;
  ELSIF p_tombstone = 'lift' THEN
    DELETE FROM setting_tombstones t WHERE t.user_id = p_user AND t.client_id = p_client AND t.key = p_key;
  END IF;
  PERFORM pg_notify(p_channel, p_user || ' ' || p_client || ' ' || rev);
  RETURN rev;
END
$$;
--> statement-breakpoint
-- Saves one setting, or refuses: 'if-match', 'if-none-match' (412), 'max-keys', 'max-bytes' (409).
-- One writer per user at a time on every instance (quotas span the user's applications): the
-- advisory lock comes first, and each statement after it reads what committed before it.
CREATE FUNCTION latchkey_save_setting(p_user text, p_client text, p_key text, p_value text, p_now bigint, p_bytes bigint,
    p_max_keys bigint, p_max_bytes bigint, p_if_match text, p_if_none_match text, p_channel text,
    OUT refused text, OUT revision bigint, OUT updated_at bigint)
LANGUAGE plpgsql AS $$
DECLARE
  cur_value text;
  cur_updated bigint;
  used_keys bigint := 0;
  used_bytes bigint := 0;
  growth bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('settings:' || p_user, 0));
  SELECT s.value, s.updated_at INTO cur_value, cur_updated FROM settings s
    WHERE s.user_id = p_user AND s.client_id = p_client AND s.key = p_key;
  refused := latchkey_setting_refusal(cur_value, cur_updated, p_if_match, p_if_none_match);
  IF refused IS NOT NULL THEN RETURN; END IF;
  growth := p_bytes - coalesce(octet_length(cur_value), 0);
  -- Usage is read only if it can refuse: most writes replace a value with one no larger.
  IF cur_value IS NULL OR growth > 0 THEN
    SELECT coalesce(sum(c.n) FILTER (WHERE c.client_id = p_client), 0), coalesce(sum(c.bytes), 0) INTO used_keys, used_bytes
      FROM setting_counts c WHERE c.user_id = p_user;
  END IF;
  IF cur_value IS NULL AND used_keys >= p_max_keys THEN refused := 'max-keys'; RETURN; END IF;
  IF growth > 0 AND used_bytes + growth > p_max_bytes THEN refused := 'max-bytes'; RETURN; END IF;
  -- updated_at advances on every write, even two in one millisecond.
  updated_at := CASE WHEN cur_value IS NULL THEN p_now ELSE greatest(p_now, cur_updated + 1) END;
  revision := latchkey_next_setting_revision(p_user, p_client, p_key, updated_at, CASE WHEN cur_value IS NULL THEN 'lift' ELSE 'none' END, p_channel);
  INSERT INTO settings AS s (user_id, client_id, key, value, updated_at, revision) VALUES (p_user, p_client, p_key, p_value, updated_at, revision)
    ON CONFLICT (user_id, client_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, revision = excluded.revision;
END
$$;
--> statement-breakpoint
-- Deletes one setting, or refuses: 'if-match', 'if-none-match' (412), 'missing' (404).
CREATE FUNCTION latchkey_delete_setting(p_user text, p_client text, p_key text, p_now bigint, p_if_match text, p_if_none_match text, p_channel text,
    OUT refused text, OUT revision bigint)
LANGUAGE plpgsql AS $$
DECLARE
  cur_value text;
  cur_updated bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('settings:' || p_user, 0));
  SELECT s.value, s.updated_at INTO cur_value, cur_updated FROM settings s
    WHERE s.user_id = p_user AND s.client_id = p_client AND s.key = p_key;
  refused := coalesce(latchkey_setting_refusal(cur_value, cur_updated, p_if_match, p_if_none_match), CASE WHEN cur_value IS NULL THEN 'missing' END);
  IF refused IS NOT NULL THEN RETURN; END IF;
  DELETE FROM settings s WHERE s.user_id = p_user AND s.client_id = p_client AND s.key = p_key;
  revision := latchkey_next_setting_revision(p_user, p_client, p_key, p_now, 'bury', p_channel);
END
$$;
