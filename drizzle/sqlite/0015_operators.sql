-- Issue 23, first part: groups of users, their members, apps restricted to groups; admins and
-- disabled accounts; the audit log.
CREATE TABLE `audit_events` (
	`id` integer PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`kind` text NOT NULL,
	`user_id` text,
	`client_id` text,
	`address` text,
	`user_agent` text,
	`detail` text
);
--> statement-breakpoint
CREATE INDEX `audit_events_at` ON `audit_events` (`at`);--> statement-breakpoint
CREATE INDEX `audit_events_user` ON `audit_events` (`user_id`,`at`);--> statement-breakpoint
CREATE INDEX `audit_events_client` ON `audit_events` (`client_id`,`at`);--> statement-breakpoint
CREATE TABLE `client_groups` (
	`client_id` text NOT NULL,
	`group_name` text NOT NULL,
	PRIMARY KEY(`client_id`, `group_name`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`group_name`) REFERENCES `groups`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `client_groups_group` ON `client_groups` (`group_name`);--> statement-breakpoint
CREATE TABLE `group_members` (
	`group_name` text NOT NULL,
	`user_id` text NOT NULL,
	PRIMARY KEY(`group_name`, `user_id`),
	FOREIGN KEY (`group_name`) REFERENCES `groups`(`name`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `group_members_user` ON `group_members` (`user_id`);--> statement-breakpoint
CREATE TABLE `groups` (
	`name` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `users` ADD `is_admin` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `disabled_at` integer;