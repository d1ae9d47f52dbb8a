CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"alg" text NOT NULL,
	"private_jwk" text NOT NULL,
	"public_jwk" text NOT NULL,
	"created_at" bigint NOT NULL,
	"retired_at" bigint
);
--> statement-breakpoint
ALTER TABLE "auth_codes" ADD COLUMN "nonce" text;--> statement-breakpoint
ALTER TABLE "auth_codes" ADD COLUMN "auth_time" bigint;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "post_logout_redirect_uris" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "refresh_tokens" ADD COLUMN "auth_time" bigint;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "auth_time" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified" boolean DEFAULT false NOT NULL;