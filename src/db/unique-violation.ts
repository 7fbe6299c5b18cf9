// Uniqueness is decided by the database's unique indexes, never by a check-then-insert (which
// two concurrent requests can both pass). The violation becomes the domain's conflict here.

/** True when `err` is PostgreSQL's unique_violation (23505) on the given constraint or index. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return typeof e === 'object' && e !== null && e.code === '23505' && e.constraint === constraint;
}

/** Runs `work`; a unique violation of `constraint` is thrown as `conflict()` instead. */
export async function translateUniqueViolation<T>(constraint: string, conflict: () => Error, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, constraint)) throw conflict();
    throw err;
  }
}
