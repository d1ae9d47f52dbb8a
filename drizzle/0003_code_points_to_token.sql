ALTER TABLE `auth_codes` ADD `token_hash` text;--> statement-breakpoint
UPDATE `auth_codes` SET `token_hash` = (SELECT `token_hash` FROM `access_tokens` WHERE `access_tokens`.`code_hash` = `auth_codes`.`code_hash`) WHERE `used_at` IS NOT NULL;--> statement-breakpoint
DROP INDEX `access_tokens_code`;--> statement-breakpoint
ALTER TABLE `access_tokens` DROP COLUMN `code_hash`;
