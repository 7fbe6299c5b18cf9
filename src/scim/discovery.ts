// What a directory reads to learn this SCIM service (RFC 7644, 4; RFC 7643, 5-7): fixed documents.
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse' as const;

export const SERVICE_PROVIDER_CONFIG = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
  documentationUri: '/docs',
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: 200 },
  // Ours (RFC 7643 5 has no attribute for it): src/scim/groups.ts, MAX_MEMBERS_PER_REQUEST.
  maxMembersPerRequest: 1000,
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [
    { type: 'oauthbearertoken', name: 'API key', description: 'An API key holding scim.provision, as Authorization: Bearer <key> or x-api-key.', primary: true },
  ],
  meta: { resourceType: 'ServiceProviderConfig', location: '/scim/v2/ServiceProviderConfig' },
};

const attribute = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

const USER_SCHEMA = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
  id: 'urn:ietf:params:scim:schemas:core:2.0:User',
  name: 'User',
  description: 'A person of the back office. userName is the e-mail address.',
  attributes: [
    attribute('userName', 'string', { required: true, uniqueness: 'server', mutability: 'immutable' }),
    attribute('externalId', 'string', { caseExact: true }),
    attribute('name', 'complex', { subAttributes: [attribute('givenName', 'string'), attribute('familyName', 'string'), attribute('formatted', 'string')] }),
    attribute('displayName', 'string'),
    attribute('active', 'boolean'),
    attribute('emails', 'complex', { multiValued: true, mutability: 'readOnly', subAttributes: [attribute('value', 'string'), attribute('type', 'string'), attribute('primary', 'boolean')] }),
    attribute('groups', 'complex', { multiValued: true, mutability: 'readOnly', subAttributes: [attribute('value', 'string'), attribute('display', 'string')] }),
  ],
  meta: { resourceType: 'Schema', location: '/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:User' },
};

const GROUP_SCHEMA = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
  id: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  name: 'Group',
  description: "A role of the back office: displayName is the role's name (set by administrators), members the people holding it.",
  attributes: [
    attribute('displayName', 'string', { required: true, uniqueness: 'server', mutability: 'readOnly' }),
    attribute('members', 'complex', {
      multiValued: true,
      subAttributes: [attribute('value', 'string', { mutability: 'immutable' }), attribute('display', 'string', { mutability: 'readOnly' }), attribute('$ref', 'reference', { mutability: 'immutable', referenceTypes: ['User'] })],
    }),
  ],
  meta: { resourceType: 'Schema', location: '/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group' },
};

const GROUP_TYPE = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
  id: 'Group',
  name: 'Group',
  endpoint: '/Groups',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  meta: { resourceType: 'ResourceType', location: '/scim/v2/ResourceTypes/Group' },
};

const USER_TYPE = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
  id: 'User',
  name: 'User',
  endpoint: '/Users',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:User',
  meta: { resourceType: 'ResourceType', location: '/scim/v2/ResourceTypes/User' },
};

const listOf = (resources: Record<string, unknown>[]) => ({ schemas: [LIST], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources });

export const SCHEMAS = listOf([USER_SCHEMA, GROUP_SCHEMA]);
export const RESOURCE_TYPES = listOf([USER_TYPE, GROUP_TYPE]);
