-- Edited by hand: the last statement (data) says every existing key signed from its creation.
ALTER TABLE `signing_keys` ADD `signs_from` integer;--> statement-breakpoint
UPDATE signing_keys SET signs_from = created_at;
