// The columns a service's change of a resource's row writes: `updated_at`, and `version` up by one,
// the row's revision (docs/SAFE-WRITES.md), bumped by the statement itself even when no other
// column changes (a role's permissions and a meeting's attendees live in other tables; `now` may
// equal the last write's). Used by every resource whose table lets the service write `version`
// (roles, tasks, meetings). users and api_keys are also written outside their services (a
// sign-in's last_sign_in_at, a key's use): a trigger bumps theirs on every change of the row
// (migration 20261213T1000_safe_writes), and their services write `updated_at` alone.
import { sql } from 'kysely';

export const changedAt = (now: Date) => ({ updated_at: now, version: sql<number>`version + 1` });
