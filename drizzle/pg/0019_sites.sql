CREATE TABLE "site_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"session_hash" text NOT NULL,
	"host" text NOT NULL,
	"return_to" text NOT NULL,
	"state_hash" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "site_sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"session_hash" text NOT NULL,
	"host" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sites" (
	"host" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"policy" text NOT NULL,
	"allowed_groups" jsonb NOT NULL,
	"jwt" boolean DEFAULT false NOT NULL,
	"rules" jsonb NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "site_codes" ADD CONSTRAINT "site_codes_session_hash_sessions_id_hash_fk" FOREIGN KEY ("session_hash") REFERENCES "sessions"("id_hash") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "site_sessions" ADD CONSTRAINT "site_sessions_session_hash_sessions_id_hash_fk" FOREIGN KEY ("session_hash") REFERENCES "sessions"("id_hash") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "site_codes_session" ON "site_codes" USING btree ("session_hash");--> statement-breakpoint
CREATE INDEX "site_sessions_session" ON "site_sessions" USING btree ("session_hash");--> statement-breakpoint
CREATE INDEX "site_sessions_expires" ON "site_sessions" USING btree ("expires_at");