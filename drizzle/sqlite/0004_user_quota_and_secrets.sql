CREATE TABLE `server_secrets` (
	`name` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `setting_counts` ADD `bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- SETTINGS_MAX_USER_BYTES: setting_counts also keeps the serialized bytes of the values, exact
-- through inserts, replacements (the upsert's UPDATE), deletes and cascades (edited by hand:
-- drizzle-kit does not generate triggers).
UPDATE `setting_counts` SET `bytes` = (
  SELECT coalesce(sum(length(CAST(`value` AS BLOB))), 0) FROM `settings`
  WHERE `settings`.`user_id` = `setting_counts`.`user_id` AND `settings`.`client_id` = `setting_counts`.`client_id`
);
--> statement-breakpoint
DROP TRIGGER `settings_count_insert`;
--> statement-breakpoint
DROP TRIGGER `settings_count_delete`;
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
