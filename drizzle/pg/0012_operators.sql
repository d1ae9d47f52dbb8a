-- Issue 23, first part: groups of users, their members, apps restricted to groups; admins and
-- disabled accounts.
CREATE TABLE "client_groups" (
	"client_id" text NOT NULL,
	"group_name" text COLLATE "C" NOT NULL,
	CONSTRAINT "client_groups_client_id_group_name_pk" PRIMARY KEY("client_id","group_name")
);
--> statement-breakpoint
CREATE TABLE "group_members" (
	"group_name" text COLLATE "C" NOT NULL,
	"user_id" text NOT NULL,
	CONSTRAINT "group_members_group_name_user_id_pk" PRIMARY KEY("group_name","user_id")
);
--> statement-breakpoint
CREATE TABLE "groups" (
	"name" text COLLATE "C" PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "is_admin" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "disabled_at" bigint;--> statement-breakpoint
ALTER TABLE "client_groups" ADD CONSTRAINT "client_groups_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_groups" ADD CONSTRAINT "client_groups_group_name_groups_name_fk" FOREIGN KEY ("group_name") REFERENCES "groups"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "group_members" ADD CONSTRAINT "group_members_group_name_groups_name_fk" FOREIGN KEY ("group_name") REFERENCES "groups"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "group_members" ADD CONSTRAINT "group_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "client_groups_group" ON "client_groups" USING btree ("group_name");--> statement-breakpoint
CREATE INDEX "group_members_user" ON "group_members" USING btree ("user_id");--> statement-breakpoint
-- A resource changed in place (latchkey apply) empties the caches that hold its record, as a deleted one does (0010).
CREATE TRIGGER resources_update_notify AFTER UPDATE ON resources REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION latchkey_notify_deletes();
