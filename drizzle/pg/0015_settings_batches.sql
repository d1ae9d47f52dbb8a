-- Issue 24: settings writes that wait at an instance while its write statements are in flight go
-- together, in order, in one transaction: one commit (one WAL flush) for all of them, where a
-- user's writes each waited for the commit before it. Each write is decided exactly as
-- latchkey_save_setting / latchkey_delete_setting decide it alone, and sees the ones before it.
-- The instance orders a batch by user (each user's writes in their order), so every batch takes
-- the users' locks in one order.
--
-- p_ops: a JSON array of writes in their order: {"op":"save","user","client","key","value","now",
-- "bytes","max_keys","max_bytes","if_match","if_none_match"} or {"op":"delete","user","client",
-- "key","now","if_match","if_none_match"}. One row per write, in the same order.
CREATE FUNCTION latchkey_write_settings(p_ops jsonb, p_channel text)
RETURNS TABLE (refused text, revision bigint, updated_at bigint)
LANGUAGE plpgsql AS $$
DECLARE
  op jsonb;
  saved record;
  deleted record;
BEGIN
  FOR op IN SELECT a.e FROM jsonb_array_elements(p_ops) WITH ORDINALITY AS a(e, i) ORDER BY a.i LOOP
    IF op->>'op' = 'save' THEN
      SELECT * INTO saved FROM latchkey_save_setting(op->>'user', op->>'client', op->>'key', op->>'value', (op->>'now')::bigint, (op->>'bytes')::bigint,
        (op->>'max_keys')::bigint, (op->>'max_bytes')::bigint, op->>'if_match', op->>'if_none_match', p_channel);
      refused := saved.refused;
      revision := saved.revision;
      updated_at := saved.updated_at;
    ELSE
      SELECT * INTO deleted FROM latchkey_delete_setting(op->>'user', op->>'client', op->>'key', (op->>'now')::bigint, op->>'if_match', op->>'if_none_match', p_channel);
      refused := deleted.refused;
      revision := deleted.revision;
      updated_at := NULL;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
