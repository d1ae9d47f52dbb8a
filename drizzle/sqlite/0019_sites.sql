CREATE TABLE `site_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`session_hash` text NOT NULL,
	`host` text NOT NULL,
	`return_to` text NOT NULL,
	`state_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`session_hash`) REFERENCES `sessions`(`id_hash`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `site_codes_session` ON `site_codes` (`session_hash`);--> statement-breakpoint
CREATE TABLE `site_sessions` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`session_hash` text NOT NULL,
	`host` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`session_hash`) REFERENCES `sessions`(`id_hash`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `site_sessions_session` ON `site_sessions` (`session_hash`);--> statement-breakpoint
CREATE INDEX `site_sessions_expires` ON `site_sessions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `sites` (
	`host` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`policy` text NOT NULL,
	`allowed_groups` text NOT NULL,
	`jwt` integer DEFAULT false NOT NULL,
	`rules` text NOT NULL,
	`created_at` integer NOT NULL
);
