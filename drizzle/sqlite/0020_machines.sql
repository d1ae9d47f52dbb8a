-- Issue 38, machines and devices: client grants, allowed scopes, require_par, private_key_jwt (auth method, JWKS) and used assertion jtis; tokens without a user (client_credentials); pushed requests (RFC 9126); device codes (RFC 8628).
CREATE TABLE `device_codes` (
	`device_code_hash` text PRIMARY KEY NOT NULL,
	`user_code_hash` text NOT NULL,
	`client_id` text NOT NULL,
	`scope` text NOT NULL,
	`resource` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`interval` integer NOT NULL,
	`last_polled_at` integer,
	`status` text NOT NULL,
	`address` text NOT NULL,
	`user_id` text,
	`code_hash` text,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_codes_user_code_hash_unique` ON `device_codes` (`user_code_hash`);--> statement-breakpoint
CREATE INDEX `device_codes_expires` ON `device_codes` (`expires_at`);--> statement-breakpoint
CREATE INDEX `device_codes_client` ON `device_codes` (`client_id`);--> statement-breakpoint
CREATE TABLE `pushed_requests` (
	`uri_hash` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`params` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `pushed_requests_expires` ON `pushed_requests` (`expires_at`);--> statement-breakpoint
CREATE INDEX `pushed_requests_client` ON `pushed_requests` (`client_id`);--> statement-breakpoint
CREATE TABLE `used_assertions` (
	`client_id` text NOT NULL,
	`jti` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `jti`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `used_assertions_expires` ON `used_assertions` (`expires_at`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_access_tokens` (
	`id` integer PRIMARY KEY NOT NULL,
	`verifier_hash` text NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text,
	`scope` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`family_id` text,
	`resource` text,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_access_tokens`("id", "verifier_hash", "client_id", "user_id", "scope", "expires_at", "created_at", "family_id", "resource") SELECT "id", "verifier_hash", "client_id", "user_id", "scope", "expires_at", "created_at", "family_id", "resource" FROM `access_tokens`;--> statement-breakpoint
DROP TABLE `access_tokens`;--> statement-breakpoint
ALTER TABLE `__new_access_tokens` RENAME TO `access_tokens`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `access_tokens_family` ON `access_tokens` (`family_id`);--> statement-breakpoint
CREATE INDEX `access_tokens_user_client` ON `access_tokens` (`user_id`,`client_id`);--> statement-breakpoint
CREATE INDEX `access_tokens_client` ON `access_tokens` (`client_id`);--> statement-breakpoint
CREATE INDEX `access_tokens_expires` ON `access_tokens` (`expires_at`);--> statement-breakpoint
ALTER TABLE `clients` ADD `grant_types` text DEFAULT '["authorization_code"]' NOT NULL;--> statement-breakpoint
ALTER TABLE `clients` ADD `allowed_scopes` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `clients` ADD `require_par` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `clients` ADD `auth_method` text;--> statement-breakpoint
ALTER TABLE `clients` ADD `jwks` text;--> statement-breakpoint
ALTER TABLE `clients` ADD `jwks_uri` text;