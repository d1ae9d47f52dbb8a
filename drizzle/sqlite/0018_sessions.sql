-- Issue 34: sessions list their browser, address and times (SESSION_IDLE_TTL), a device per browser
-- ("New sign-in" notices), and back-channel logout: which apps got an id_token in which session, and
-- an outbox of logout tokens filled by a trigger whenever a session row is deleted.
CREATE TABLE `logout_deliveries` (
	`id` integer PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`sid` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer,
	`next_attempt_at` integer DEFAULT 0 NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_until` integer,
	`sent_at` integer,
	`failed_at` integer,
	`last_error` text,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `logout_deliveries_once` ON `logout_deliveries` (`client_id`,`sid`);--> statement-breakpoint
CREATE INDEX `logout_deliveries_due` ON `logout_deliveries` (`next_attempt_at`) WHERE "logout_deliveries"."sent_at" IS NULL AND "logout_deliveries"."failed_at" IS NULL;--> statement-breakpoint
CREATE TABLE `session_clients` (
	`sid` text NOT NULL,
	`client_id` text NOT NULL,
	PRIMARY KEY(`sid`, `client_id`),
	FOREIGN KEY (`sid`) REFERENCES `sessions`(`sid`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `session_clients_client` ON `session_clients` (`client_id`);--> statement-breakpoint
CREATE TABLE `user_devices` (
	`user_id` text NOT NULL,
	`device_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `device_hash`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `auth_codes` ADD `sid` text;--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `sid` text;--> statement-breakpoint
ALTER TABLE `clients` ADD `backchannel_logout_uri` text;--> statement-breakpoint
ALTER TABLE `clients` ADD `backchannel_logout_session_required` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `sid` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `created_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `last_active_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `user_agent` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `address` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `device_hash` text;--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_sid` ON `sessions` (`sid`);--> statement-breakpoint
CREATE INDEX `sessions_expires` ON `sessions` (`expires_at`);--> statement-breakpoint
-- Sessions that exist already: a public id of their own, and their sign-in as their start and last activity.
UPDATE `sessions` SET `sid` = lower(hex(randomblob(16))), `created_at` = `auth_time`, `last_active_at` = `auth_time`;--> statement-breakpoint
-- Whatever ends a session (sign-out, disable, delete, reset, recovery …) deletes its row: each app that got an
-- id_token in it and has a back-channel logout URI gets one delivery, in that same transaction. BEFORE, so the
-- session_clients rows are still there (their cascade follows the delete).
CREATE TRIGGER `sessions_backchannel_logout` BEFORE DELETE ON `sessions` BEGIN
  INSERT OR IGNORE INTO `logout_deliveries` (`client_id`, `sid`, `user_id`)
    SELECT sc.`client_id`, OLD.`sid`, OLD.`user_id` FROM `session_clients` sc JOIN `clients` c ON c.`id` = sc.`client_id`
    WHERE sc.`sid` = OLD.`sid` AND c.`backchannel_logout_uri` IS NOT NULL;
END;
