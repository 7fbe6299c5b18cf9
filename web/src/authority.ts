// The server's rule, mirrored to show an action disabled (with why) instead of a button that ends
// in a 403: acting on a target (rotating or prolonging a key, taking rights from a user or a role,
// ending someone's sessions) needs every permission the target holds (docs/AUTH.md).
export function lacking(mine: readonly string[], target: readonly string[]): string[] {
  return [...new Set(target.filter((p) => !mine.includes(p)))].sort();
}
