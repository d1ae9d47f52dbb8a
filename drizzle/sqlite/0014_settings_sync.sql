-- Issue 22, settings sync: a gap-free revision per (user, app) and a row per key changed, kept
-- SETTINGS_CHANGES_DAYS; one-time stream tickets. setting_changes is WITHOUT ROWID (by hand:
-- drizzle-kit cannot declare it), so a user's changes for an app sit together in revision order,
-- as settings do (0008).
CREATE TABLE `setting_changes` (
	`user_id` text NOT NULL,
	`client_id` text NOT NULL,
	`revision` integer NOT NULL,
	`key` text NOT NULL,
	`changed_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `client_id`, `revision`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `setting_changes_changed` ON `setting_changes` (`changed_at`);--> statement-breakpoint
CREATE INDEX `setting_changes_client` ON `setting_changes` (`client_id`);--> statement-breakpoint
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
CREATE TABLE `stream_tickets` (
	`ticket_hash` text PRIMARY KEY NOT NULL,
	`token_id` integer NOT NULL,
	`expires_at` integer NOT NULL
);
