-- Issue 22, settings sync: each key carries the revision of its latest change, a per (user, app)
-- head numbers them without gaps, a deleted key leaves a tombstone (kept SETTINGS_CHANGES_DAYS) so
-- `since` can say it is gone; one-time stream tickets. Existing settings are at revision 0.
CREATE TABLE `setting_heads` (
	`user_id` text NOT NULL,
	`client_id` text NOT NULL,
	`revision` integer NOT NULL,
	`purged_through` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`user_id`, `client_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `setting_heads_client` ON `setting_heads` (`client_id`);--> statement-breakpoint
CREATE TABLE `setting_tombstones` (
	`user_id` text NOT NULL,
	`client_id` text NOT NULL,
	`key` text NOT NULL,
	`revision` integer NOT NULL,
	`deleted_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `client_id`, `key`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `setting_tombstones_deleted` ON `setting_tombstones` (`deleted_at`);--> statement-breakpoint
CREATE INDEX `setting_tombstones_client` ON `setting_tombstones` (`client_id`);--> statement-breakpoint
CREATE TABLE `stream_tickets` (
	`ticket_hash` text PRIMARY KEY NOT NULL,
	`token_id` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `settings` ADD `revision` integer DEFAULT 0 NOT NULL;