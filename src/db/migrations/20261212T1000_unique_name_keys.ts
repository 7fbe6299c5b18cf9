// Names that must be unique (role names, the names of keys in use, e-mail addresses) are compared
// by a stored key, RFC 8265's UsernameCaseMapped comparison (full-width forms mapped to ASCII, lower
// case, NFC), with a unique index on it: `Admin `, `ＡＤＭＩＮ` and `admin` are one name in the
// database itself, whichever path writes it. The service computes the key (src/text/normalize.ts,
// uniqueNameKey); this migration keeps its own copy of that rule and of the cleaning of text, as a
// migration must not change with the code.
//
// Existing rows: their names are cleaned as the service now cleans a name it is given (NFC,
// trimmed, bidirectional and other control characters removed, since a stored name cannot be
// refused). Two roles, or two keys in use, whose names are then the same keep the name on the
// oldest (the built-in admin role first); the others get `-2`, `-3`, ... appended. Two users whose
// e-mail addresses are then the same cannot be renamed: the migration stops and names them, for the
// operator to change one (no service starts on a database whose sign-in would be ambiguous).
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

/** The service's uniqueNameKey as of this migration. */
const nameKey = (name: string) =>
  name
    .normalize('NFC')
    .replace(/[\u3000\uFF01-\uFFEE]/gu, (c) => c.normalize('NFKC'))
    .toLowerCase()
    .normalize('NFC');

/** The service's cleanName as of this migration, removing what it would refuse. */
const cleaned = (name: string) =>
  name
    .normalize('NFC')
    .replace(/[\u202A-\u202E\u2066-\u2069\u0000-\u001F\u007F-\u009F]/gu, '')
    .trim();

/** A name not yet taken: `name`, else `name-2`, `name-3`, ... within `maxLength`. */
function freeName(name: string, taken: Set<string>, maxLength: number): string {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? '' : `-${n}`;
    const candidate = `${name.slice(0, maxLength - suffix.length)}${suffix}`;
    if (!taken.has(nameKey(candidate))) return candidate;
  }
}

/** Cleans the names of `table`'s rows, oldest first, renaming the later of two that become the same. */
async function keyNames(db: Kysely<any>, table: 'roles' | 'api_keys', maxLength: number): Promise<void> {
  await sql`alter table ${sql.table(table)} add column name_key text`.execute(db);
  const order = table === 'roles' ? sql`built_in desc, created_at, id` : sql`created_at, id`;
  const { rows } = await sql<{ id: string; name: string; in_use: boolean }>`
    select id, name, ${table === 'roles' ? sql`true` : sql`revoked_at is null`} as in_use
    from ${sql.table(table)} order by ${order}`.execute(db);
  const taken = new Set<string>();
  for (const row of rows) {
    // A revoked key frees its name: only keys in use must differ.
    const name = row.in_use ? freeName(cleaned(row.name) || 'unnamed', taken, maxLength) : cleaned(row.name) || 'unnamed';
    if (row.in_use) taken.add(nameKey(name));
    await sql`update ${sql.table(table)} set name = ${name}, name_key = ${nameKey(name)} where id = ${row.id}`.execute(db);
  }
  await sql`alter table ${sql.table(table)} alter column name_key set not null`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await keyNames(db, 'roles', 64);
  await sql`drop index roles_name_lower_key`.execute(db);
  await sql`create unique index roles_name_key_key on roles (name_key)`.execute(db);

  await keyNames(db, 'api_keys', 100);
  await sql`drop index api_keys_name_lower_key`.execute(db);
  await sql`create unique index api_keys_name_key_key on api_keys (name_key) where revoked_at is null`.execute(db);

  await sql`alter table users add column email_key text`.execute(db);
  // Printable ASCII without spaces (every address the contract accepts) is its own key in lower
  // case: one statement for the many, the rule below row by row for the rest.
  await sql`update users set email_key = lower(email) where email ~ '^[!-~]+$'`.execute(db);
  const CLEAN_ASCII = '^([!-~]([ -~]*[!-~])?)?$';
  const { rows: users } = await sql<{ id: string; email: string; first_name: string; last_name: string }>`
    select id, email, first_name, last_name from users
    where email_key is null or first_name !~ ${CLEAN_ASCII} or last_name !~ ${CLEAN_ASCII}`.execute(db);
  for (const user of users) {
    const email = cleaned(user.email);
    await sql`update users set email = ${email}, email_key = ${nameKey(email)}, first_name = ${cleaned(user.first_name)}, last_name = ${cleaned(user.last_name)}
      where id = ${user.id}`.execute(db);
  }
  const { rows: same } = await sql<{ emails: string[] }>`
    select array_agg(email order by created_at) as emails from users group by email_key having count(*) > 1 limit 1`.execute(db);
  if (same[0]) {
    throw new Error(`The e-mail addresses ${same[0].emails.join(', ')} are one address (RFC 8265); change all but one, then migrate again.`);
  }
  await sql`alter table users alter column email_key set not null`.execute(db);
  await sql`drop index users_email_lower_key`.execute(db);
  // Also the index of sign-in's lookup by e-mail.
  await sql`create unique index users_email_key_key on users (email_key)`.execute(db);

  // Role descriptions: NFC and trimmed, controls removed but line breaks and tabs kept.
  const { rows: roles } = await sql<{ id: string; description: string }>`select id, description from roles`.execute(db);
  for (const role of roles) {
    const description = role.description
      .normalize('NFC')
      .replace(/[\u202A-\u202E\u2066-\u2069\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/gu, '')
      .trim();
    if (description !== role.description) await sql`update roles set description = ${description} where id = ${role.id}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index users_email_key_key`.execute(db);
  await sql`create unique index users_email_lower_key on users (lower(email))`.execute(db);
  await sql`alter table users drop column email_key`.execute(db);
  await sql`drop index api_keys_name_key_key`.execute(db);
  await sql`create unique index api_keys_name_lower_key on api_keys (lower(name)) where revoked_at is null`.execute(db);
  await sql`alter table api_keys drop column name_key`.execute(db);
  await sql`drop index roles_name_key_key`.execute(db);
  await sql`create unique index roles_name_lower_key on roles (lower(name))`.execute(db);
  await sql`alter table roles drop column name_key`.execute(db);
}
