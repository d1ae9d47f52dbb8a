-- Edited by hand: "public". dropped from the references; the last statement says how every existing
-- authorization signed in (a password, the only way there was) and when, from its refresh tokens.
CREATE TABLE "passkeys" (
	"credential_id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"name" text NOT NULL,
	"public_key" text NOT NULL,
	"sign_count" bigint NOT NULL,
	"transports" jsonb NOT NULL,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint
);
--> statement-breakpoint
CREATE TABLE "recovery_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "totp_secrets" (
	"user_id" text PRIMARY KEY NOT NULL,
	"sealed_secret" text NOT NULL,
	"created_at" bigint NOT NULL,
	"confirmed_at" bigint,
	"last_step" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webauthn_challenges" (
	"browser_hash" text NOT NULL,
	"purpose" text NOT NULL,
	"challenge" text NOT NULL,
	"user_id" text,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "webauthn_challenges_browser_hash_purpose_pk" PRIMARY KEY("browser_hash","purpose")
);
--> statement-breakpoint
ALTER TABLE "auth_codes" ADD COLUMN "amr" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "require_mfa" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "refresh_families" ADD COLUMN "auth_time" bigint;--> statement-breakpoint
ALTER TABLE "refresh_families" ADD COLUMN "amr" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "amr" text DEFAULT 'pwd' NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "pending" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "passkeys" ADD CONSTRAINT "passkeys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recovery_codes" ADD CONSTRAINT "recovery_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "totp_secrets" ADD CONSTRAINT "totp_secrets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webauthn_challenges" ADD CONSTRAINT "webauthn_challenges_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "passkeys_user" ON "passkeys" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "recovery_codes_user" ON "recovery_codes" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "webauthn_challenges_expires" ON "webauthn_challenges" USING btree ("expires_at");--> statement-breakpoint
UPDATE "refresh_families" f SET "amr" = 'pwd', "auth_time" = (SELECT max(t."auth_time") FROM "refresh_tokens" t WHERE t."family_id" = f."family_id");
