// What handlers and authenticators are built from. Tests build the same with a test database,
// a manual clock and their own configuration.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from './db/schema.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Outcomes } from './outcomes.js';

export interface Dependencies {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  config: Config;
  /** Where sign-in, refresh and API-key outcomes are counted; uncounted when absent. */
  outcomes?: Outcomes;
}

/** What a service needing only the database and the time takes (the command line has no more). */
export type ServiceDeps = Pick<Dependencies, 'db' | 'clock'>;
