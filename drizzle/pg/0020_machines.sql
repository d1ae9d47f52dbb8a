-- Issue 38, machines and devices: client grants, allowed scopes, require_par, private_key_jwt (auth method, JWKS) and used assertion jtis; tokens without a user (client_credentials); pushed requests (RFC 9126); device codes (RFC 8628).
CREATE TABLE "device_codes" (
	"device_code_hash" text PRIMARY KEY NOT NULL,
	"user_code_hash" text NOT NULL,
	"client_id" text NOT NULL,
	"scope" text NOT NULL,
	"resource" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"interval" integer NOT NULL,
	"last_polled_at" bigint,
	"status" text NOT NULL,
	"address" text NOT NULL,
	"user_id" text,
	"code_hash" text,
	CONSTRAINT "device_codes_user_code_hash_unique" UNIQUE("user_code_hash")
);
--> statement-breakpoint
CREATE TABLE "pushed_requests" (
	"uri_hash" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"params" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "used_assertions" (
	"client_id" text NOT NULL,
	"jti" text NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "used_assertions_client_id_jti_pk" PRIMARY KEY("client_id","jti")
);
--> statement-breakpoint
ALTER TABLE "access_tokens" ALTER COLUMN "user_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "grant_types" jsonb DEFAULT '["authorization_code"]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "allowed_scopes" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "require_par" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "auth_method" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "jwks" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "jwks_uri" text;--> statement-breakpoint
ALTER TABLE "device_codes" ADD CONSTRAINT "device_codes_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_codes" ADD CONSTRAINT "device_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pushed_requests" ADD CONSTRAINT "pushed_requests_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "used_assertions" ADD CONSTRAINT "used_assertions_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_codes_expires" ON "device_codes" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "device_codes_client" ON "device_codes" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "pushed_requests_expires" ON "pushed_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "pushed_requests_client" ON "pushed_requests" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "used_assertions_expires" ON "used_assertions" USING btree ("expires_at");