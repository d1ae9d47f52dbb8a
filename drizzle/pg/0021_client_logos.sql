CREATE TABLE "client_logos" (
	"client_id" text PRIMARY KEY NOT NULL,
	"content_type" text NOT NULL,
	"bytes" "bytea" NOT NULL,
	"etag" text NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "launch_url" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "logo_etag" text;--> statement-breakpoint
ALTER TABLE "client_logos" ADD CONSTRAINT "client_logos_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;