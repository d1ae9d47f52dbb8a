CREATE TABLE `provider_states` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`provider_id` text NOT NULL,
	`browser_hash` text NOT NULL,
	`nonce` text NOT NULL,
	`return_to` text,
	`user_id` text,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`provider_id`) REFERENCES `providers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `provider_states_expires` ON `provider_states` (`expires_at`);--> statement-breakpoint
CREATE TABLE `providers` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`issuer` text NOT NULL,
	`api_url` text,
	`client_id` text NOT NULL,
	`client_secret_sealed` text NOT NULL,
	`scope` text NOT NULL,
	`allow_create` integer DEFAULT false NOT NULL,
	`allowed_domains` text NOT NULL,
	`link_verified_email` integer DEFAULT false NOT NULL,
	`trust_mfa` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `user_identities` (
	`provider_id` text NOT NULL,
	`subject` text NOT NULL,
	`user_id` text NOT NULL,
	`email` text,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	PRIMARY KEY(`provider_id`, `subject`),
	FOREIGN KEY (`provider_id`) REFERENCES `providers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `user_identities_user_provider` ON `user_identities` (`user_id`,`provider_id`);