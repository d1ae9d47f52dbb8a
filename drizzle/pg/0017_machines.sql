-- Issue 38, machines and devices: client grants and allowed scopes, PAR, tokens without a user (client_credentials).
CREATE TABLE "pushed_requests" (
	"uri_hash" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"params" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "access_tokens" ALTER COLUMN "user_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "grant_types" jsonb DEFAULT '["authorization_code"]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "allowed_scopes" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "require_par" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "pushed_requests" ADD CONSTRAINT "pushed_requests_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "pushed_requests_expires" ON "pushed_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "pushed_requests_client" ON "pushed_requests" USING btree ("client_id");