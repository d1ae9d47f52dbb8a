CREATE TABLE `resources` (
	`uri` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`scopes` text NOT NULL,
	`token_format` text NOT NULL,
	`introspectors` text NOT NULL,
	`created_at` integer NOT NULL
);
