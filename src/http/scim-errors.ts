// SCIM's error bodies (RFC 7644, 3.12): every error of a `/scim/v2` path is answered in this shape,
// not as a problem document, since the directories that call it (Entra ID, Okta) read `status` (a
// string) and `scimType`. The body also carries the problem document's own members (`code`,
// `request_id`, `errors`, `required_permission` ...), so the stable code is still there to branch on.
// SCIM bodies are never inflected (contract: `x-inflection: none`, src/contract/inflection.ts).
import type { Problem } from './problem.js';

export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_MEDIA_TYPE = 'application/scim+json';

/** Whether a request addresses the SCIM service (an operation of it, or any other path under it). */
export const isScimPath = (path: string) => path.startsWith('/scim/');

/** RFC 7644's scimType of our codes, where it has one. */
const SCIM_TYPES: Record<string, string> = {
  validation_failed: 'invalidSyntax',
  malformed_json: 'invalidSyntax',
  duplicate_key: 'invalidSyntax',
  invalid_filter: 'invalidFilter',
  email_taken: 'uniqueness',
  invalid_path: 'invalidPath',
  no_target: 'noTarget',
  invalid_value: 'invalidValue',
  too_many_members: 'invalidValue',
  mutability: 'mutability',
};

/**
 * The media type of a SCIM answer, from the request's Accept: `application/json` when the client
 * asks for it and not for SCIM's own (RFC 7644, 8.1) nor anything; else `application/scim+json`.
 * (Entra ID and Okta send either; the contract documents both.)
 */
export function scimMediaType(accept: string | string[] | undefined): string {
  const asked = String(accept ?? '').toLowerCase();
  const json = asked.includes('application/json') && !asked.includes(SCIM_MEDIA_TYPE) && !asked.includes('*/*');
  return json ? 'application/json' : SCIM_MEDIA_TYPE;
}

/** The SCIM error of a problem (snake_case members kept: they are the same in every style). */
export function scimErrorOf(problem: Problem): Record<string, unknown> {
  const { status, code, detail, request_id, errors, retry_after, allowed_values, required_permission, missing_permissions } = problem;
  const scimType = SCIM_TYPES[code];
  return {
    schemas: [SCIM_ERROR_SCHEMA],
    status: String(status),
    ...(scimType ? { scimType } : {}),
    detail: detail ?? problem.title,
    code,
    request_id,
    ...(errors ? { errors } : {}),
    ...(retry_after !== undefined ? { retry_after } : {}),
    ...(allowed_values ? { allowed_values } : {}),
    ...(required_permission ? { required_permission } : {}),
    ...(missing_permissions ? { missing_permissions } : {}),
  };
}
