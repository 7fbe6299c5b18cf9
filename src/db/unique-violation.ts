// Uniqueness is decided by the database's unique indexes, never by a check-then-insert (which
// two concurrent requests can both pass). Callers catch the violation and answer 409.

/** True when `err` is PostgreSQL's unique_violation (23505) on the given constraint or index. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return typeof e === 'object' && e !== null && e.code === '23505' && e.constraint === constraint;
}
