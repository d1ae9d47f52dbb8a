-- Edited by hand: the last statement says how every existing authorization signed in (a password,
-- the only way there was) and when, from its refresh tokens.
CREATE TABLE `passkeys` (
	`credential_id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`public_key` text NOT NULL,
	`sign_count` integer NOT NULL,
	`transports` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `passkeys_user` ON `passkeys` (`user_id`);--> statement-breakpoint
CREATE TABLE `recovery_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `recovery_codes_user` ON `recovery_codes` (`user_id`);--> statement-breakpoint
CREATE TABLE `totp_secrets` (
	`user_id` text PRIMARY KEY NOT NULL,
	`sealed_secret` text NOT NULL,
	`created_at` integer NOT NULL,
	`confirmed_at` integer,
	`last_step` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `webauthn_challenges` (
	`browser_hash` text NOT NULL,
	`purpose` text NOT NULL,
	`challenge` text NOT NULL,
	`user_id` text,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`browser_hash`, `purpose`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webauthn_challenges_expires` ON `webauthn_challenges` (`expires_at`);--> statement-breakpoint
ALTER TABLE `auth_codes` ADD `amr` text;--> statement-breakpoint
ALTER TABLE `clients` ADD `require_mfa` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `auth_time` integer;--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `amr` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `amr` text DEFAULT 'pwd' NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `pending` integer DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE `refresh_families` SET `amr` = 'pwd', `auth_time` = (SELECT max(`auth_time`) FROM `refresh_tokens` WHERE `refresh_tokens`.`family_id` = `refresh_families`.`family_id`);
