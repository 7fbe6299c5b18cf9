// The bearer credential as RFC 6750 sends it: `Authorization: Bearer <token>`.
const BEARER = /^bearer +(\S+) *$/i;

/** The token of an `Authorization: Bearer <token>` header (scheme name in any case), or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
}
