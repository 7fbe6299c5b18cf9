// The mail sender is woken when a message is written (src/mail/sender.ts): a statement-level
// trigger notifies `mail_due`, delivered at the commit of the change that wrote it (a rolled-back
// change wakes nobody). Typed Kysely<any> so the migration stays frozen in time.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function notify_mail_due() returns trigger language plpgsql as $$
    begin
      perform pg_notify('mail_due', '');
      return null;
    end $$`.execute(db);
  await sql`create trigger messages_notify_mail_due after insert on messages for each statement execute function notify_mail_due()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger messages_notify_mail_due on messages`.execute(db);
  await sql`drop function notify_mail_due()`.execute(db);
}
