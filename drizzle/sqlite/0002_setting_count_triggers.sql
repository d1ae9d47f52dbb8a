-- Keep setting_counts exact: one more on every new key, one less on every delete (cascading
-- deletes of a user or an application fire these too). Upserts that replace a value are
-- UPDATEs and leave the count alone.
INSERT INTO `setting_counts` (`user_id`, `client_id`, `n`)
SELECT `user_id`, `client_id`, count(*) FROM `settings` GROUP BY `user_id`, `client_id`;
--> statement-breakpoint
CREATE TRIGGER `settings_count_insert` AFTER INSERT ON `settings` BEGIN
  INSERT INTO `setting_counts` (`user_id`, `client_id`, `n`) VALUES (NEW.`user_id`, NEW.`client_id`, 1)
  ON CONFLICT (`user_id`, `client_id`) DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `settings_count_delete` AFTER DELETE ON `settings` BEGIN
  UPDATE `setting_counts` SET `n` = `n` - 1 WHERE `user_id` = OLD.`user_id` AND `client_id` = OLD.`client_id`;
END;
