// The wrk scripts of POST /tokens (bench/refresh.lua): every request rotates a session, so each wrk
// connection starts from a session of its own, opened directly in the database, and a set is good
// for one run only: each run of wrk takes a script with new sessions.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { TokenSet } from '../../src/auth/sessions/tokens.js';
import { openSessions } from './database.js';

/** Writes bench/refresh.lua to `file`, after the token sets it starts from (`sets`, one per connection). */
export function writeRefreshScript(file: string, sets: readonly TokenSet[]): string {
  const template = readFileSync(new URL('../refresh.lua', import.meta.url), 'utf8');
  writeFileSync(file, `sets = {\n${sets.map((s) => `  "${s.access_token} ${s.refresh_token}",`).join('\n')}\n}\n${template}`);
  return file;
}

/** A maker of refresh scripts: each call opens `connections` new sessions of `user` and writes a script (in a directory of its own) that starts from them. */
export function refreshScripts(db: Kysely<Database>, user: { id: string; email: string }, connections: number): () => Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-refresh-'));
  let made = 0;
  return async () => writeRefreshScript(join(dir, `refresh-${++made}.lua`), await openSessions(db, user, connections));
}
