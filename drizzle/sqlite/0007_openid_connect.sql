CREATE TABLE `signing_keys` (
	`kid` text PRIMARY KEY NOT NULL,
	`alg` text NOT NULL,
	`private_jwk` text NOT NULL,
	`public_jwk` text NOT NULL,
	`created_at` integer NOT NULL,
	`retired_at` integer
);
--> statement-breakpoint
ALTER TABLE `auth_codes` ADD `nonce` text;--> statement-breakpoint
ALTER TABLE `auth_codes` ADD `auth_time` integer;--> statement-breakpoint
ALTER TABLE `clients` ADD `post_logout_redirect_uris` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `refresh_tokens` ADD `auth_time` integer;--> statement-breakpoint
ALTER TABLE `sessions` ADD `auth_time` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `email_verified` integer DEFAULT false NOT NULL;