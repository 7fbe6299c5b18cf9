// PostgreSQL text cannot hold U+0000: a string carrying one fails in the database, as a 500 and
// possibly after other writes. Such a string is refused here, before anything runs, wherever it
// sits in the query or the JSON body (every path parameter is a uuid, checked by the validator).
import type { RequestHandler } from 'express';
import { validationFailed } from '../errors.js';

/** Where the first string holding U+0000 is (`query/role`, `body/session/email`), if any. Iterative: bodies may nest deep. */
export function nulCharacterLocation(value: unknown, root: string): string | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [current, location] = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return location;
    } else if (current !== null && typeof current === 'object') {
      for (const [key, inner] of Object.entries(current)) {
        if (key.includes('\u0000')) return location;
        stack.push([inner, `${location}/${key}`]);
      }
    }
  }
  return undefined;
}

export const refuseNulCharacters: RequestHandler = (req, _res, next) => {
  const location = nulCharacterLocation(req.query, 'request/query') ?? nulCharacterLocation(req.body, 'request/body');
  if (!location) return next();
  const message = 'must not contain the NUL character (U+0000)';
  next(validationFailed([{ location, message }]));
};
