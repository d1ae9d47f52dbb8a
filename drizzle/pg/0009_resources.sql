CREATE TABLE "resources" (
	"uri" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"token_format" text NOT NULL,
	"introspectors" jsonb NOT NULL,
	"created_at" bigint NOT NULL
);
