// Applies the migrations in src/db/migrations with Kysely's Migrator.
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { loadMigrations } from './migrations/index.js';

/** The files of src/db/migrations (or their compiled copies in dist/). */
class FolderMigrationProvider implements MigrationProvider {
  getMigrations(): Promise<Record<string, Migration>> {
    return loadMigrations();
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  // Migrations are named by timestamp prefixes that engineers pick in parallel, so one may land
  // on main after a later-named one was applied to some database: apply it all the same (each
  // migration stands alone; test/migration-order.test.ts), rather than refuse to start.
  const migrator = new Migrator({ db, provider: new FolderMigrationProvider(), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
