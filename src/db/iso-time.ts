// Times as the API prints them, formatted by PostgreSQL in the statement that reads them (no
// Date in between): to the millisecond, as JavaScript's toISOString() prints (what the contract
// shows), or to the microsecond, exactly as stored (what a cursor carries and the audit seal
// hashes: a millisecond would skip or repeat rows). A null time stays null.
import { sql, type RawBuilder } from 'kysely';

export const isoMillis = (column: string): RawBuilder<string> => sql`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export const isoMicros = (column: string): RawBuilder<string> => sql`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** What isoMicros prints (years 1 to 9999): the shape a cursor's time must have. */
export const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
