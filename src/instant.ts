// A date-time a request sent, as the instant the service stores. The contract's `format:
// date-time` (RFC 3339 as ajv-formats reads it) also lets through texts that name no instant a
// JavaScript Date and a PostgreSQL timestamp agree on: a leap second (23:59:60), an offset of hours
// only (+01), year 0000 (which PostgreSQL reads as 1 BC), or a time an offset carries past 9999.
// Those are bad input, refused with 400 naming the field, rather than a 500 or a shifted date.
import { validationFailed } from './errors.js';

const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** The instant `value` names, in years 1 to 9999 (UTC); else 400 `invalid_date_time` at `location` (`request/body/due_at`). */
export function parseInstant(value: string, location: string): Date {
  const at = new Date(value);
  // NaN (what Date makes of a text it cannot read) fails both comparisons.
  if (at.getTime() >= EARLIEST && at.getTime() <= LATEST) return at;
  throw validationFailed([{ location, message: 'must be an RFC 3339 date-time of years 1 to 9999, without a leap second', error_code: 'invalid_date_time' }]);
}

/**
 * The instant `value` names (parseInstant's checks), written in UTC with every fractional digit
 * sent, for PostgreSQL to read to the microsecond: a Date keeps milliseconds only, and PostgreSQL
 * refuses offsets past ±15:59 that RFC 3339 allows (+23:00). An offset is whole minutes, so it
 * moves the seconds and leaves the fraction as written.
 */
export function instantText(value: string, location: string): string {
  const at = parseInstant(value, location);
  const fraction = /^[^.]*(\.\d+)/.exec(value)?.[1] ?? '';
  return `${at.toISOString().slice(0, 19)}${fraction}Z`;
}
