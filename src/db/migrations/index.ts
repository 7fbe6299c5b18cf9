// The migrations are the files of this folder whose names start with a UTC timestamp
// (`20270102T1000_invitations.ts`): a new migration is a new file, and no list names them. Read
// from the folder this module is in, so the same code finds the .ts files under src/ and the .js
// files tsc writes under dist/.
import { readdirSync } from 'node:fs';
import { extname } from 'node:path';
import type { Migration } from 'kysely';

const MIGRATION_FILE = /^(\d{8}T\d{4}_[a-z0-9_]+)\.(?:ts|js)$/;

/** The migrations' names among a folder's files, sorted; a file misnamed throws. */
export function migrationNames(files: readonly string[], extension: string): string[] {
  return files
    .filter((file) => extname(file) === extension && file !== `index${extension}`)
    .map((file) => {
      const name = MIGRATION_FILE.exec(file)?.[1];
      // A file not named like a migration would never run: refuse to start rather than skip it.
      if (name === undefined) throw new Error(`src/db/migrations/${file} is not named <yyyymmdd>T<hhmm>_<lower_snake_name>: rename it.`);
      return name;
    })
    .sort();
}

let loaded: Promise<Record<string, Migration>> | undefined;

/** Every migration of the folder, by name (its file name without the extension). */
export function loadMigrations(): Promise<Record<string, Migration>> {
  loaded ??= (async () => {
    const folder = new URL('.', import.meta.url);
    const ownExtension = extname(new URL(import.meta.url).pathname);
    const names = migrationNames(readdirSync(folder), ownExtension);
    const modules = await Promise.all(names.map((name) => import(new URL(`${name}${ownExtension}`, folder).href) as Promise<Migration>));
    return Object.fromEntries(names.map((name, i) => [name, modules[i]!]));
  })();
  return loaded;
}
