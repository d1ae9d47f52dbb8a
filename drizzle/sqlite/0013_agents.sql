-- Issue 21: audience-bound tokens (resource on codes, tokens, families; a consent per resource),
-- clients met through metadata documents or dynamic registration, registration tokens.
CREATE TABLE `registration_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_consents` (
	`user_id` text NOT NULL,
	`client_id` text NOT NULL,
	`scope` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`last_used_at` integer,
	`resource` text DEFAULT '' NOT NULL,
	PRIMARY KEY(`user_id`, `client_id`, `resource`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_consents`("user_id", "client_id", "scope", "created_at", "updated_at", "last_used_at", "resource") SELECT "user_id", "client_id", "scope", "created_at", "updated_at", "last_used_at", '' FROM `consents`;--> statement-breakpoint
DROP TABLE `consents`;--> statement-breakpoint
ALTER TABLE `__new_consents` RENAME TO `consents`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `consents_client` ON `consents` (`client_id`);--> statement-breakpoint
ALTER TABLE `access_tokens` ADD `resource` text;--> statement-breakpoint
ALTER TABLE `auth_codes` ADD `resource` text;--> statement-breakpoint
ALTER TABLE `clients` ADD `kind` text DEFAULT 'operator' NOT NULL;--> statement-breakpoint
ALTER TABLE `clients` ADD `metadata_expires_at` integer;--> statement-breakpoint
ALTER TABLE `clients` ADD `registration_token_hash` text;--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `resource` text;--> statement-breakpoint
ALTER TABLE `refresh_tokens` ADD `resource` text;