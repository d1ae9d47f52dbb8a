-- Issue 21: audience-bound tokens (resource on codes, tokens, families; a consent per resource),
-- clients met through metadata documents or dynamic registration, registration tokens.
CREATE TABLE "registration_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "consents" ADD COLUMN "resource" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "consents" DROP CONSTRAINT "consents_user_id_client_id_pk";--> statement-breakpoint
ALTER TABLE "consents" ADD CONSTRAINT "consents_user_id_client_id_resource_pk" PRIMARY KEY("user_id","client_id","resource");--> statement-breakpoint
ALTER TABLE "access_tokens" ADD COLUMN "resource" text;--> statement-breakpoint
ALTER TABLE "auth_codes" ADD COLUMN "resource" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "kind" text DEFAULT 'operator' NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "metadata_expires_at" bigint;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "registration_token_hash" text;--> statement-breakpoint
ALTER TABLE "refresh_families" ADD COLUMN "resource" text;--> statement-breakpoint
ALTER TABLE "refresh_tokens" ADD COLUMN "resource" text;--> statement-breakpoint
-- A deleted resource empties the caches that hold its record (its tokens go with it too).
CREATE TRIGGER resources_notify AFTER DELETE ON resources REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_deletes();
