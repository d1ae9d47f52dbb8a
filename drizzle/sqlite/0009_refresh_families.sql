-- Edited by hand: the last two statements (data) give every family that already has refresh tokens
-- its row (no key: old tokens spell their own row id), and say every existing key signed from its
-- creation; the partial index names its column unqualified.
CREATE TABLE `refresh_families` (
	`id` integer PRIMARY KEY NOT NULL,
	`family_id` text NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text NOT NULL,
	`key_hash` text,
	`created_at` integer NOT NULL,
	`used_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`window_start` integer DEFAULT 0 NOT NULL,
	`window_count` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `refresh_families_family_id_unique` ON `refresh_families` (`family_id`);--> statement-breakpoint
CREATE INDEX `refresh_families_user_client` ON `refresh_families` (`user_id`,`client_id`);--> statement-breakpoint
CREATE INDEX `refresh_families_client` ON `refresh_families` (`client_id`);--> statement-breakpoint
CREATE INDEX `refresh_families_expires` ON `refresh_families` (`expires_at`);--> statement-breakpoint
DROP INDEX `refresh_tokens_expires`;--> statement-breakpoint
CREATE INDEX `refresh_tokens_rotated` ON `refresh_tokens` (`rotated_at`) WHERE `rotated_at` IS NOT NULL;--> statement-breakpoint
ALTER TABLE `signing_keys` ADD `signs_from` integer;--> statement-breakpoint
INSERT INTO `refresh_families` (`family_id`, `client_id`, `user_id`, `key_hash`, `created_at`, `used_at`, `expires_at`)
SELECT `family_id`, min(`client_id`), min(`user_id`), NULL, min(`created_at`), max(`created_at`), max(`expires_at`) FROM `refresh_tokens` GROUP BY `family_id`;--> statement-breakpoint
UPDATE `signing_keys` SET `signs_from` = `created_at`;
