-- Access tokens become lk_at_<id>.<verifier>. Tokens of the old form cannot be presented in the
-- new one, so they are not copied (edited by hand: drizzle-kit generated a copy of columns the
-- old table does not have); apps that held one get a new token through the authorization flow.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_access_tokens` (
	`id` integer PRIMARY KEY NOT NULL,
	`verifier_hash` text NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text NOT NULL,
	`scope` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
DROP TABLE `access_tokens`;--> statement-breakpoint
ALTER TABLE `__new_access_tokens` RENAME TO `access_tokens`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `access_tokens_user_client` ON `access_tokens` (`user_id`,`client_id`);--> statement-breakpoint
CREATE INDEX `access_tokens_client` ON `access_tokens` (`client_id`);--> statement-breakpoint
CREATE INDEX `access_tokens_expires` ON `access_tokens` (`expires_at`);--> statement-breakpoint
ALTER TABLE `auth_codes` ADD `token_id` integer;