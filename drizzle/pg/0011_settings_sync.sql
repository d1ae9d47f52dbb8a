-- Issue 22, settings sync: each key carries the revision of its latest change, a per (user, app)
-- head numbers them without gaps, a deleted key leaves a tombstone (kept SETTINGS_CHANGES_DAYS) so
-- `since` can say it is gone; one-time stream tickets. Existing settings are at revision 0.
CREATE TABLE "setting_heads" (
	"user_id" text NOT NULL,
	"client_id" text NOT NULL,
	"revision" bigint NOT NULL,
	"purged_through" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "setting_heads_user_id_client_id_pk" PRIMARY KEY("user_id","client_id")
);
--> statement-breakpoint
CREATE TABLE "setting_tombstones" (
	"user_id" text NOT NULL,
	"client_id" text NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"revision" bigint NOT NULL,
	"deleted_at" bigint NOT NULL,
	CONSTRAINT "setting_tombstones_user_id_client_id_key_pk" PRIMARY KEY("user_id","client_id","key")
);
--> statement-breakpoint
CREATE TABLE "stream_tickets" (
	"ticket_hash" text PRIMARY KEY NOT NULL,
	"token_id" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "settings" ADD COLUMN "revision" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "setting_heads" ADD CONSTRAINT "setting_heads_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "setting_heads" ADD CONSTRAINT "setting_heads_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "setting_tombstones" ADD CONSTRAINT "setting_tombstones_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "setting_tombstones" ADD CONSTRAINT "setting_tombstones_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "setting_heads_client" ON "setting_heads" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "setting_tombstones_deleted" ON "setting_tombstones" USING btree ("deleted_at");--> statement-breakpoint
CREATE INDEX "setting_tombstones_client" ON "setting_tombstones" USING btree ("client_id");