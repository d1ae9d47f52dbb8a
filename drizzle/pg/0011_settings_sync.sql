-- Issue 22, settings sync: a gap-free revision per (user, app) and a row per key changed, kept
-- SETTINGS_CHANGES_DAYS; one-time stream tickets.
CREATE TABLE "setting_changes" (
	"user_id" text NOT NULL,
	"client_id" text NOT NULL,
	"revision" bigint NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"changed_at" bigint NOT NULL,
	CONSTRAINT "setting_changes_user_id_client_id_revision_pk" PRIMARY KEY("user_id","client_id","revision")
);
--> statement-breakpoint
CREATE TABLE "setting_heads" (
	"user_id" text NOT NULL,
	"client_id" text NOT NULL,
	"revision" bigint NOT NULL,
	"purged_through" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "setting_heads_user_id_client_id_pk" PRIMARY KEY("user_id","client_id")
);
--> statement-breakpoint
CREATE TABLE "stream_tickets" (
	"ticket_hash" text PRIMARY KEY NOT NULL,
	"token_id" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "setting_changes" ADD CONSTRAINT "setting_changes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "setting_changes" ADD CONSTRAINT "setting_changes_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "setting_heads" ADD CONSTRAINT "setting_heads_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "setting_heads" ADD CONSTRAINT "setting_heads_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "setting_changes_changed" ON "setting_changes" USING btree ("changed_at");--> statement-breakpoint
CREATE INDEX "setting_changes_client" ON "setting_changes" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "setting_heads_client" ON "setting_heads" USING btree ("client_id");