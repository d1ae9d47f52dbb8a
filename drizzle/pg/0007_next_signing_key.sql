-- Edited by hand: the last statement (data) says every existing key signed from its creation.
ALTER TABLE "signing_keys" ADD COLUMN "signs_from" bigint;--> statement-breakpoint
UPDATE signing_keys SET signs_from = created_at;
