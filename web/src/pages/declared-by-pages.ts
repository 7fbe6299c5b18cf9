// What the pages' entries (registry.ts) bring of the contract's words: their permissions, audit
// event types and problem codes, merged from every entry that declares them. The type names the
// keys they declare, so that a list of the platform's plus these can be checked complete by the
// compiler against the contract's enum.
import type { Wording } from '../page-messages.js';
import * as pages from './registry.js';

type Entries = typeof pages;
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type Field = 'permissions' | 'auditTypes' | 'problems';

/** The keys the entries declare under `field`, each with its wording. */
export type DeclaredByPages<F extends Field> = UnionToIntersection<{ [P in keyof Entries]: Entries[P] extends { [K in F]: infer W } ? { [K in keyof W]: Wording } : never }[keyof Entries]>;

/** Every entry's `field`, merged. */
export function declaredByPages<V>(field: Field): Record<string, V> {
  return Object.assign({}, ...Object.values(pages).map((entry) => (field in entry ? (entry as unknown as Record<Field, Record<string, V>>)[field] : {})));
}

/** The same record with each value turned by `f`. */
export const mapValues = <A, B>(record: Record<string, A>, f: (value: A) => B): Record<string, B> => Object.fromEntries(Object.entries(record).map(([key, value]) => [key, f(value)]));
