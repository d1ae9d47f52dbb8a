-- Settings stored in their primary key's order (WITHOUT ROWID): a user's settings for an app sit
-- together on one or two pages, so listing them is one range scan instead of an index lookup and
-- a table lookup per row, wherever their rows were written (written by hand: drizzle-kit cannot
-- declare WITHOUT ROWID). The table is rebuilt; DROP TABLE fires no trigger, so the counts in
-- setting_counts stay as they were, and the triggers are made again on the new table.
CREATE TABLE `__new_settings` (
	`user_id` text NOT NULL,
	`client_id` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `client_id`, `key`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_settings` (`user_id`, `client_id`, `key`, `value`, `updated_at`)
  SELECT `user_id`, `client_id`, `key`, `value`, `updated_at` FROM `settings` ORDER BY `user_id`, `client_id`, `key`;
--> statement-breakpoint
DROP TABLE `settings`;
--> statement-breakpoint
ALTER TABLE `__new_settings` RENAME TO `settings`;
--> statement-breakpoint
-- On (client_id, key), not (client_id) alone: an index's entries end with the primary key, so
-- the old one matched "user_id = ? AND client_id = ?" as well as the table and SQLite, with no
-- statistics, chose it and then looked every row up. Deleting a client still uses it.
CREATE INDEX `settings_client` ON `settings` (`client_id`, `key`);
--> statement-breakpoint
CREATE TRIGGER `settings_count_insert` AFTER INSERT ON `settings` BEGIN
  INSERT INTO `setting_counts` (`user_id`, `client_id`, `n`, `bytes`) VALUES (NEW.`user_id`, NEW.`client_id`, 1, length(CAST(NEW.`value` AS BLOB)))
  ON CONFLICT (`user_id`, `client_id`) DO UPDATE SET `n` = `n` + 1, `bytes` = `bytes` + excluded.`bytes`;
END;
--> statement-breakpoint
CREATE TRIGGER `settings_count_update` AFTER UPDATE OF `value` ON `settings` BEGIN
  UPDATE `setting_counts` SET `bytes` = `bytes` + length(CAST(NEW.`value` AS BLOB)) - length(CAST(OLD.`value` AS BLOB))
  WHERE `user_id` = NEW.`user_id` AND `client_id` = NEW.`client_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `settings_count_delete` AFTER DELETE ON `settings` BEGIN
  UPDATE `setting_counts` SET `n` = `n` - 1, `bytes` = `bytes` - length(CAST(OLD.`value` AS BLOB))
  WHERE `user_id` = OLD.`user_id` AND `client_id` = OLD.`client_id`;
END;
