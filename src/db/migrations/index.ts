// The migrations are the files of this folder whose names start with a UTC timestamp
// (`20270102T1000_invitations.ts`): a new migration is a new file, and no list names them. Read
// from the folder this module is in, so the same code finds the .ts files under src/ and the .js
// files tsc writes under dist/.
import { readdirSync } from 'node:fs';
import { extname } from 'node:path';
import type { Migration } from 'kysely';

const MIGRATION_FILE = /^(\d{8}T\d{4}_[a-z0-9_]+)\.(?:ts|js)$/;

let loaded: Promise<Record<string, Migration>> | undefined;

/** Every migration of the folder, by name (its file name without the extension). */
export function loadMigrations(): Promise<Record<string, Migration>> {
  loaded ??= (async () => {
    const folder = new URL('.', import.meta.url);
    const ownExtension = extname(new URL(import.meta.url).pathname);
    const files = readdirSync(folder).filter((file) => extname(file) === ownExtension && file !== `index${ownExtension}`);
    const names = files.map((file) => {
      const name = MIGRATION_FILE.exec(file)?.[1];
      // A file that is not named like a migration would never run: refuse to start rather than skip it.
      if (name === undefined) throw new Error(`src/db/migrations/${file} is not named <yyyymmdd>T<hhmm>_<lower_snake_name>: rename it.`);
      return name;
    });
    names.sort();
    const modules = await Promise.all(names.map((name) => import(new URL(`${name}${ownExtension}`, folder).href) as Promise<Migration>));
    return Object.fromEntries(names.map((name, i) => [name, modules[i]!]));
  })();
  return loaded;
}
