// The secrets scan's two halves: a plain-text dump of a test database (pg_dump, schema and data),
// and a search of any text for secrets in clear.
import { spawnSync } from 'node:child_process';

const PG_DUMP = `${process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'}/pg_dump`;

/** Everything the database holds, as pg_dump writes it. */
export function dumpDatabase(url: string): string {
  const dump = spawnSync(PG_DUMP, ['--no-owner', url], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  if (dump.status !== 0) throw new Error(`pg_dump failed: ${dump.stderr}`);
  return dump.stdout;
}

/** The secrets (value -> what it is) found in `text`, described without giving them away. */
export function secretsIn(text: string, secrets: Map<string, string>): string[] {
  return [...secrets].filter(([secret]) => text.includes(secret)).map(([secret, what]) => `${what} ${secret.slice(0, 8)}...`);
}
