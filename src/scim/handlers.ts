// Handlers of the SCIM operations (/scim/v2, src/scim). Answers are application/scim+json,
// or application/json to a client asking for it (RFC 7644, 8.1); errors are SCIM errors
// (src/http/scim-errors.ts).
import type { PlatformServices } from '../services.js';
import type { Handler } from '../http/handler-types.js';
import { requireCaller } from '../auth/caller.js';
import { scimMediaType } from '../http/scim-errors.js';
import { RESOURCE_TYPES, SCHEMAS, SERVICE_PROVIDER_CONFIG } from './discovery.js';

/** The media type of the answer, from the request's Accept (src/http/scim-errors.ts). */
const mediaType = (headers: Record<string, string | string[] | undefined>): Record<string, string> => ({ 'Content-Type': scimMediaType(headers.accept) });

export function scimHandlers({ scimUsers, scimGroups }: Pick<PlatformServices, 'scimUsers' | 'scimGroups'>) {
  const listScimUsers: Handler<'listScimUsers'> = async ({ query, principal, headers }) => ({
    status: 200,
    body: await scimUsers.list(requireCaller(principal), query),
    headers: mediaType(headers),
  });

  const createScimUser: Handler<'createScimUser'> = async ({ body, principal, request, headers }) => {
    const user = await scimUsers.create(requireCaller(principal), body, request);
    return { status: 201, body: user, headers: { ...mediaType(headers), Location: `/scim/v2/Users/${user.id}` } };
  };

  const getScimUser: Handler<'getScimUser'> = async ({ path, principal, headers }) => ({
    status: 200,
    body: await scimUsers.get(requireCaller(principal), path.id),
    headers: mediaType(headers),
  });

  const replaceScimUser: Handler<'replaceScimUser'> = async ({ path, body, principal, request, headers }) => ({
    status: 200,
    body: await scimUsers.replace(requireCaller(principal), path.id, body, request),
    headers: mediaType(headers),
  });

  const patchScimUser: Handler<'patchScimUser'> = async ({ path, body, principal, request, headers }) => ({
    status: 200,
    body: await scimUsers.patch(requireCaller(principal), path.id, body.Operations, request),
    headers: mediaType(headers),
  });

  const deleteScimUser: Handler<'deleteScimUser'> = async ({ path, principal, request }) => {
    await scimUsers.delete(requireCaller(principal), path.id, request);
    return { status: 204, body: undefined };
  };

  const listScimGroups: Handler<'listScimGroups'> = async ({ query, principal, headers }) => ({
    status: 200,
    body: await scimGroups.list(requireCaller(principal), query),
    headers: mediaType(headers),
  });

  // Refused whatever is sent (groups are roles, made by administrators): after the permission check of the edge.
  const createScimGroup: Handler<'createScimGroup'> = async ({ principal }) => {
    requireCaller(principal);
    return scimGroups.create();
  };

  const getScimGroup: Handler<'getScimGroup'> = async ({ path, query, principal, headers }) => ({
    status: 200,
    body: await scimGroups.get(requireCaller(principal), path.id, query.excludedAttributes),
    headers: mediaType(headers),
  });

  const replaceScimGroup: Handler<'replaceScimGroup'> = async ({ path, body, principal, request, headers }) => ({
    status: 200,
    body: await scimGroups.replace(requireCaller(principal), path.id, body, request),
    headers: mediaType(headers),
  });

  const patchScimGroup: Handler<'patchScimGroup'> = async ({ path, body, principal, request, headers }) => ({
    status: 200,
    body: await scimGroups.patch(requireCaller(principal), path.id, body.Operations, request),
    headers: mediaType(headers),
  });

  const deleteScimGroup: Handler<'deleteScimGroup'> = async ({ principal }) => {
    requireCaller(principal);
    return scimGroups.delete();
  };

  const getScimServiceProviderConfig: Handler<'getScimServiceProviderConfig'> = async ({ headers }) => ({ status: 200, body: SERVICE_PROVIDER_CONFIG, headers: mediaType(headers) });
  const listScimSchemas: Handler<'listScimSchemas'> = async ({ headers }) => ({ status: 200, body: SCHEMAS, headers: mediaType(headers) });
  const listScimResourceTypes: Handler<'listScimResourceTypes'> = async ({ headers }) => ({ status: 200, body: RESOURCE_TYPES, headers: mediaType(headers) });

  return {
    listScimUsers,
    createScimUser,
    getScimUser,
    replaceScimUser,
    patchScimUser,
    deleteScimUser,
    listScimGroups,
    createScimGroup,
    getScimGroup,
    replaceScimGroup,
    patchScimGroup,
    deleteScimGroup,
    getScimServiceProviderConfig, listScimSchemas, listScimResourceTypes };
}
