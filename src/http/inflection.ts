// Reading the x-api-inflection header (the key styles themselves, and how a body is written in
// each: src/contract/inflection.ts).
import { ProblemError } from './problem.js';
import { DEFAULT_INFLECTION, INFLECTION_HEADER, INFLECTIONS, type Inflection } from '../contract/inflection.js';

/**
 * Reads the header (or `source`): absent means snake; the four styles are accepted in any letter
 * case and with surrounding blanks; anything else, an empty value included, is a 400 listing them.
 */
export function parseInflection(value: string | string[] | undefined, source = `The ${INFLECTION_HEADER} header`): Inflection {
  if (value === undefined) return DEFAULT_INFLECTION;
  const candidate = Array.isArray(value) ? value[0] : value;
  const normalised = candidate?.trim().toLowerCase();
  if ((INFLECTIONS as readonly string[]).includes(normalised ?? '')) return normalised as Inflection;
  throw new ProblemError(
    400,
    'invalid_inflection',
    `${source} must be one of ${INFLECTIONS.join(', ')}.`,
    { allowed_values: [...INFLECTIONS] },
  );
}
