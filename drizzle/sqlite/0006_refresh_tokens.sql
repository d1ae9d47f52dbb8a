CREATE TABLE `refresh_tokens` (
	`id` integer PRIMARY KEY NOT NULL,
	`verifier_hash` text NOT NULL,
	`family_id` text NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text NOT NULL,
	`scope` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`rotated_at` integer,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `refresh_tokens_family` ON `refresh_tokens` (`family_id`);--> statement-breakpoint
CREATE INDEX `refresh_tokens_user_client` ON `refresh_tokens` (`user_id`,`client_id`);--> statement-breakpoint
CREATE INDEX `refresh_tokens_client` ON `refresh_tokens` (`client_id`);--> statement-breakpoint
CREATE INDEX `refresh_tokens_expires` ON `refresh_tokens` (`expires_at`);--> statement-breakpoint
ALTER TABLE `access_tokens` ADD `family_id` text;--> statement-breakpoint
CREATE INDEX `access_tokens_family` ON `access_tokens` (`family_id`);--> statement-breakpoint
ALTER TABLE `auth_codes` ADD `family_id` text;--> statement-breakpoint
ALTER TABLE `consents` ADD `last_used_at` integer;