// The server's rule (docs/AUTH.md, "Changing rights"; src/auth/authority.ts), mirrored here so a
// page shows an action disabled, with why, instead of a control that ends in a 403. The server
// still decides. Every page asks these two functions; none re-implements the comparison.

/**
 * The permissions in `needed` that the person lacks, sorted, each once. Acting on a target
 * (rotating a key, disabling a user, taking rights from a user or a role) needs every permission
 * the target holds; handing out a permission needs it.
 */
export function lacking(mine: readonly string[], needed: readonly string[]): string[] {
  return [...new Set(needed.filter((p) => !mine.includes(p)))].sort();
}

/**
 * What the person lacks to put an item on a target or take it off (a permission on a role, a role
 * on a user), judged against the target as saved, as the server does: adding needs everything the
 * item gives; removing needs everything the target holds. Empty: allowed.
 */
export function lackingToToggle(mine: readonly string[], target: { holds: readonly string[]; has: boolean }, gives: readonly string[]): string[] {
  return lacking(mine, target.has ? target.holds : gives);
}
