// PostgreSQL text cannot hold U+0000: a string carrying one fails in the database, as a 500 and
// possibly after other writes. Such a string is refused here, before anything runs, wherever it
// sits in the query or the JSON body (every path parameter is a uuid, checked by the validator).
import type { RequestHandler } from 'express';
import { validationFailed } from '../errors.js';

interface Visit {
  value: unknown;
  key: string;
  parent: Visit | undefined;
}

/** `root/key/key`: composed only for the one place reported, not for every value looked at. */
function locationOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | undefined = visit; at; at = at.parent) keys.push(at.key);
  return keys.reverse().join('/');
}

/** Where the first string holding U+0000 is (`query/role`, `body/session/email`), if any. Iterative: bodies may nest deep. */
export function nulCharacterLocation(value: unknown, root: string): string | undefined {
  const stack: Visit[] = [{ value, key: root, parent: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const current = visit.value;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return locationOf(visit);
    } else if (current !== null && typeof current === 'object') {
      for (const key of Object.keys(current)) {
        if (key.includes('\u0000')) return locationOf(visit);
        stack.push({ value: (current as Record<string, unknown>)[key], key, parent: visit });
      }
    }
  }
  return undefined;
}

/**
 * Whether the query string can hold U+0000 at all: the query parser (Node's querystring) makes one
 * only from `%00` (Node's HTTP parser refuses a raw NUL in the request line), so a query without
 * it is not walked.
 */
const mayHoldNul = (url: string) => url.includes('%00') || url.includes('\u0000');

export const refuseNulCharacters: RequestHandler = (req, _res, next) => {
  const location = (mayHoldNul(req.originalUrl) ? nulCharacterLocation(req.query, 'request/query') : undefined) ?? (req.body === undefined ? undefined : nulCharacterLocation(req.body, 'request/body'));
  if (!location) return next();
  const message = 'must not contain the NUL character (U+0000)';
  next(validationFailed([{ location, message }]));
};
