-- Issue 33: a resource server's right to introspect other clients' tokens (client create|update --introspect).
ALTER TABLE `clients` ADD `introspects` text DEFAULT '[]' NOT NULL;
