// The mock tells the truth: every operation of the bundled contract, in every key style, sent both
// to `make mock` (scripts/mock.sh: Prism in front of the contract's examples) and to the real
// service (a server process on real PostgreSQL, with a real API key or access token holding every
// permission; the mock takes the same headers, it accepts any credential). The requests are
// derived from the contract, never listed: a new operation is compared as soon as it is there.
//
// What is compared, by rule:
// - A request the contract rejects (a required field, query or header parameter missing; a field
//   or parameter of the wrong type; an unknown field or query parameter; a bad header value, such
//   as x-api-inflection: kebab; no credential at all): the mock and the service must answer the
//   same status and the same problem `code`. Such a request is refused before any state is read,
//   so the two can agree, and a team building against the mock meets the errors it will meet.
// - The valid request (the contract's example, in the style): the mock answers its documented
//   success; the service answers the same status, or refuses it for a reason of state, which a
//   mock that keeps none cannot know (an unknown id, a signature or challenge it cannot check, a
//   name already taken). Such a refusal is allowed only with a status the operation documents and
//   a code that is not one of the refusals of the request itself (REQUEST_REFUSALS): the service
//   must take the request the mock took as valid.
// - Every answer of the mock must be documented for the operation and match its schema in the
//   style asked for (snake_case, the default, when the header names no style: as the service does).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { startMock, type PrismProcess } from './support/prism.js';
import { adminRoleId, makeApiKey, makeUser } from './support/access-fixtures.js';
import { budget } from './support/budgets.js';
import { deref, indexOperations, type JsonSchema, type OpenApiDocument, type OperationInfo } from '../src/contract/spec.js';
import { INFLECTIONS, styleKey, type Inflection } from '../src/contract/inflection.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { hashPassword } from '../src/auth/secrets/passwords.js';
import { bundlePath } from '../src/paths.js';

const operations = indexOperations(spec);
const contracts = Object.fromEntries(INFLECTIONS.map((style) => [style, JSON.parse(readFileSync(bundlePath(style), 'utf8')) as OpenApiDocument])) as Record<Inflection, OpenApiDocument>;
const PASSWORD = 'differential passphrase 1234';
/** The codes of a refusal of the request itself, decided before any state is read: never "state". */
const REQUEST_REFUSALS = new Set(['validation_failed', 'invalid_inflection', 'unauthenticated', 'unsupported_media_type', 'malformed_json', 'duplicate_key']);

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
for (const style of INFLECTIONS) ajv.addSchema(contracts[style] as JsonSchema, style);

let database: TestDatabase;
let server: ServerProcess;
let mock: PrismProcess;
let apiKey: string;
let passwordHash: string;
let admin: { userId: string; email: string; accessToken: string };

async function signIn(email: string): Promise<{ access_token: string; refresh_token: string }> {
  const res = await fetch(`${server.url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session: { email, password: PASSWORD } }) });
  const body = (await res.json()) as { access_token: string; refresh_token: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

/** A new administrator, signed in for real: for a valid request that may end or change its session. */
async function newAdmin(): Promise<{ userId: string; email: string; accessToken: string; refreshToken: string }> {
  const user = await makeUser(database.db, { roleIds: [await adminRoleId(database.db)], passwordHash });
  const tokens = await signIn(user.email);
  return { userId: user.id, email: user.email, accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
}

beforeAll(async () => {
  database = await createTestDatabase();
  // Prism takes its time to start: once for the file, while the service starts.
  const mockStarting = startMock('snake');
  mockStarting.catch(() => {});
  // Per-person limits off: this file sends every operation's valid request with few callers.
  server = await startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SWEEP_INTERVAL_S: '0', USER_RATE_LIMIT: '1000000/60' });
  passwordHash = await hashPassword(PASSWORD);
  apiKey = (await makeApiKey(database.db, [...PERMISSIONS])).secret;
  const first = await newAdmin();
  admin = first;
  mock = await mockStarting;
}, budget({ serverStart: 1, mockStart: 1, passwordHash: 2 }));

afterAll(async () => {
  await mock?.stop();
  await server?.stop();
  await database?.destroy();
});

interface Request {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: unknown;
  /** The key style the answer must be in. */
  answerStyle: Inflection;
}

interface Answer {
  status: number;
  contentType: string;
  body: unknown;
  text: string;
}

async function send(base: string, request: Request): Promise<Answer> {
  const hasBody = request.body !== undefined;
  const res = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers: { ...request.headers, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
    ...(hasBody ? { body: JSON.stringify(request.body) } : {}),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body, text };
}

/** The answer's error code: styled in a problem document, as written in a SCIM error (SCIM bodies are never inflected). */
const codeOf = (answer: Answer, style: Inflection) => {
  const body = answer.body as Record<string, unknown> | undefined;
  return Array.isArray(body?.schemas) ? body.code : body?.[styleKey('code', style)];
};

/** What is wrong with an answer of the mock against the operation in the style's contract, if anything. */
function contractViolation(op: OperationInfo, answer: Answer, style: Inflection): string | undefined {
  const operation = contracts[style].paths[op.path]![op.method]!;
  const raw = operation.responses?.[String(answer.status)] as JsonSchema | undefined;
  if (!raw) return `status ${answer.status} is not documented`;
  const response = deref(contracts[style], raw)!;
  if (!response.content) return answer.text === '' ? undefined : `a body where the contract documents none: ${answer.text}`;
  const mediaType = answer.contentType.split(';')[0]!.trim();
  if (!response.content[mediaType]) return `content type ${mediaType}, documented: ${Object.keys(response.content).join(', ')}`;
  const pointer = typeof raw.$ref === 'string' ? raw.$ref.slice(1) : `/paths/${op.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${op.method}/responses/${answer.status}`;
  const validate = ajv.getSchema(`${style}#${pointer}/content/${mediaType.replace(/\//g, '~1')}/schema`) ?? ajv.compile({ $ref: `${style}#${pointer}/content/${mediaType.replace(/\//g, '~1')}/schema` });
  return validate(answer.body) ? undefined : `body does not match the ${style} schema: ${ajv.errorsText(validate.errors)}: ${answer.text.slice(0, 300)}`;
}

type Parameter = { name: string; in: string; required?: boolean; schema?: JsonSchema; example?: unknown };

function parametersOf(op: OperationInfo): Parameter[] {
  const item = deref(spec, spec.paths[op.path]) ?? {};
  return [...(item.parameters ?? []), ...(op.raw.parameters ?? [])].map((p: JsonSchema) => deref(spec, p) as Parameter);
}

const CREDENTIAL_HEADERS = new Set(['x-api-key', 'authorization']);

/** A value of the parameter the contract accepts: its example, or one made from its schema. */
function parameterValue(parameter: Parameter): string {
  if (parameter.example !== undefined) return String(parameter.example);
  const schema = deref(spec, parameter.schema) ?? {};
  if (schema.format === 'uuid') return randomUUID();
  if (schema.example !== undefined) return String(schema.example);
  if (Array.isArray(schema.enum)) return String(schema.enum[0]);
  throw new Error(`${parameter.in} parameter ${parameter.name} has neither example nor format to make a value from: add an example to the contract`);
}

/** A value of another JSON type than the schema's. */
function wrongType(schema: JsonSchema): unknown {
  const types = ([] as string[]).concat(schema.type ?? []);
  return types.includes('object') || types.includes('array') ? 'not-an-object' : { not: 'a scalar' };
}

/** A query or header value the schema refuses, when one can be made; undefined otherwise. */
function badParameterValue(parameter: Parameter): string | undefined {
  const schema = deref(spec, parameter.schema) ?? {};
  if (schema.type === 'integer' || schema.type === 'number') return 'not-a-number';
  if (schema.format === 'uuid') return 'not-a-uuid';
  if (schema.format === 'date-time') return 'yesterday';
  if (Array.isArray(schema.enum)) return 'not-one-of-them';
  if (typeof schema.maxLength === 'number') return 'x'.repeat(schema.maxLength + 1);
  return undefined;
}

interface Credentials {
  /** The headers of a credential the operation accepts (none for a public operation). */
  headers: Record<string, string>;
  /** Values put into the valid request's body, by snake_case key: what must be real or unique. */
  fill: Record<string, unknown>;
}

async function credentialsFor(op: OperationInfo): Promise<Credentials> {
  const unique = randomUUID().slice(0, 8);
  const fill: Record<string, unknown> = { email: `differential-${unique}@example.com`, name: `differential ${unique}` };
  if (op.security.length === 0) {
    // A public operation (signing in): a real person's credentials.
    const user = await makeUser(database.db, { passwordHash });
    return { headers: {}, fill: { ...fill, email: user.email, password: PASSWORD } };
  }
  if (op.security.includes('apiKey')) return { headers: { 'x-api-key': apiKey }, fill: { ...fill, organizer_id: admin.userId, attendee_ids: [admin.userId], assignee_id: admin.userId } };
  // Bearer only: a safe method leaves its caller as it was; any other may end or change the
  // session or the password it is called with, so it gets an administrator of its own.
  const caller = op.method === 'get' ? { ...admin, refreshToken: '' } : await newAdmin();
  return {
    headers: { authorization: `Bearer ${caller.accessToken}` },
    fill: { ...fill, current_password: PASSWORD, refresh_token: caller.refreshToken, organizer_id: caller.userId, attendee_ids: [caller.userId], assignee_id: caller.userId },
  };
}

/** The request example of the operation in the style's contract, with the fill put in (found by the style's key names). */
function exampleBody(op: OperationInfo, style: Inflection, fill: Record<string, unknown>): unknown {
  const operation = contracts[style].paths[op.path]![op.method]!;
  const media = deref(contracts[style], operation.requestBody)?.content?.['application/json'];
  if (!media) return undefined;
  const example = media.example ?? Object.values<{ value: unknown }>(media.examples ?? {})[0]?.value;
  if (example === undefined) throw new Error(`${op.operationId} has a request body but no example in the contract: add one`);
  const styledFill = new Map(Object.entries(fill).map(([key, value]) => [styleKey(key, style), value]));
  const replace = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(replace);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, styledFill.has(key) && typeof inner === typeof styledFill.get(key) ? styledFill.get(key) : replace(inner)]));
  };
  return replace(structuredClone(example));
}

/** The valid request, and the requests the contract rejects, all derived from the operation. */
function requestsFor(op: OperationInfo, style: Inflection, credentials: Credentials): { valid: Request; invalid: Request[] } {
  const parameters = parametersOf(op);
  const pathValues = new Map(parameters.filter((p) => p.in === 'path').map((p) => [p.name, parameterValue(p)]));
  const pathWith = (values: Map<string, string>) => op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values.get(name)!));
  const query = new Map(parameters.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, parameterValue(p)]));
  const url = (path: string, q: Map<string, string>) => (q.size === 0 ? path : `${path}?${new URLSearchParams([...q]).toString()}`);
  const headerParameters = parameters.filter((p) => p.in === 'header' && !CREDENTIAL_HEADERS.has(p.name.toLowerCase()) && p.name.toLowerCase() !== 'x-api-inflection');
  const headers: Record<string, string> = {
    accept: 'application/json, application/problem+json',
    'x-api-inflection': style,
    ...Object.fromEntries(headerParameters.filter((p) => p.required).map((p) => [p.name.toLowerCase(), parameterValue(p)])),
    ...credentials.headers,
  };
  const body = exampleBody(op, style, credentials.fill);
  const method = op.method.toUpperCase();
  const valid: Request = { name: 'the valid request', method, path: url(pathWith(pathValues), query), headers, body, answerStyle: style };
  const invalid: Request[] = [];
  const variant = (name: string, change: Partial<Request>) => invalid.push({ ...valid, name, ...change });

  // Missing: a required field of the body, a required query or header parameter.
  const bodySchema = deref(contracts[style], deref(contracts[style], contracts[style].paths[op.path]![op.method]!.requestBody)?.content?.['application/json']?.schema);
  const bodyObject = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const required = (bodySchema?.required ?? []) as string[];
  if (bodyObject && required[0] !== undefined) {
    const { [required[0]]: _, ...rest } = bodyObject;
    variant(`without the required field ${required[0]}`, { body: rest });
  }
  const requiredQuery = [...query.keys()][0];
  if (requiredQuery !== undefined) variant(`without the required query parameter ${requiredQuery}`, { path: url(pathWith(pathValues), new Map([...query].filter(([name]) => name !== requiredQuery))) });
  for (const parameter of headerParameters.filter((p) => p.required)) {
    const { [parameter.name.toLowerCase()]: _, ...rest } = headers;
    variant(`without the required header ${parameter.name}`, { headers: rest });
  }

  // Wrong type: the body's first typed field, the body itself, each path parameter, the first query parameter a wrong value can be made for.
  const typedField = bodyObject && Object.entries<JsonSchema>(bodySchema?.properties ?? {}).find(([name, schema]) => name in bodyObject && deref(contracts[style], schema)?.type !== undefined);
  if (bodyObject && typedField) variant(`with ${typedField[0]} of the wrong type`, { body: { ...bodyObject, [typedField[0]]: wrongType(deref(contracts[style], typedField[1])!) } });
  if (bodyObject) variant('with a body that is not an object', { body: ['not', 'an', 'object'] });
  for (const parameter of parameters.filter((p) => p.in === 'path')) {
    const bad = badParameterValue(parameter);
    if (bad !== undefined) variant(`with the path parameter ${parameter.name} of the wrong type`, { path: url(pathWith(new Map([...pathValues, [parameter.name, bad]])), query) });
  }
  const badQuery = parameters.filter((p) => p.in === 'query').map((p) => [p, badParameterValue(p)] as const).find(([, bad]) => bad !== undefined);
  if (badQuery) variant(`with the query parameter ${badQuery[0].name} of the wrong type`, { path: url(pathWith(pathValues), new Map([...query, [badQuery[0].name, badQuery[1]!]])) });

  // Unknown: a body field, a query parameter.
  if (bodyObject) variant('with an unknown field', { body: { ...bodyObject, [styleKey('unknown_field', style)]: 1 } });
  variant('with an unknown query parameter', { path: url(pathWith(pathValues), new Map([...query, ['unknown_parameter', '1']])) });

  // Bad header values: x-api-inflection (answered in the default style, snake), and every other header parameter a refused value can be made for.
  variant('with x-api-inflection: kebab', { headers: { ...headers, 'x-api-inflection': 'kebab' }, answerStyle: 'snake' });
  for (const parameter of headerParameters) {
    const bad = badParameterValue(parameter);
    if (bad !== undefined) variant(`with a refused ${parameter.name} header`, { headers: { ...headers, [parameter.name.toLowerCase()]: bad } });
  }

  // No credential at all, where the operation asks for one.
  if (op.security.length > 0) {
    const anonymous = Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name)));
    variant('without any credential', { headers: anonymous });
  }
  return { valid, invalid };
}

const firstSuccess = (op: OperationInfo) => Object.keys(op.raw.responses ?? {}).map(Number).filter((status) => status >= 200 && status < 300).sort()[0];

describe.each(INFLECTIONS.map((style) => ({ style })))('the mock and the service, in $style', ({ style }) => {
  it.each(operations.map((op) => ({ op, name: `${op.method.toUpperCase()} ${op.path}` })))(
    '$name: the same status and code for every request the contract rejects; the documented success',
    async ({ op }) => {
      const { valid, invalid } = requestsFor(op, style, await credentialsFor(op));
      const problems: string[] = [];
      const label = (request: Request) => `${request.method} ${request.path} ${request.name}`;

      for (const request of invalid) {
        const [fromMock, fromService] = await Promise.all([send(mock.url, request), send(server.url, request)]);
        const codes = [codeOf(fromMock, request.answerStyle), codeOf(fromService, request.answerStyle)];
        if (fromMock.status !== fromService.status || codes[0] !== codes[1]) {
          problems.push(`${label(request)}: mock ${fromMock.status} ${codes[0]}, service ${fromService.status} ${codes[1]} (${fromService.text.slice(0, 200)})`);
        }
        const violation = contractViolation(op, fromMock, request.answerStyle);
        if (violation) problems.push(`${label(request)}: the mock's answer: ${violation}`);
      }

      // The valid request last: it may end the caller's session or change what exists.
      const [fromMock, fromService] = await Promise.all([send(mock.url, valid), send(server.url, valid)]);
      const violation = contractViolation(op, fromMock, style);
      if (violation) problems.push(`${label(valid)}: the mock's answer: ${violation}`);
      if (firstSuccess(op) === undefined) {
        // Documented without a success (creating or deleting a SCIM group: groups are roles, made by
        // administrators): the mock answers a documented refusal, the service its 403 for the
        // operation itself, not a refusal of the request nor of the caller's permission.
        const code = codeOf(fromService, style);
        if (fromService.status !== 403 || typeof code !== 'string' || REQUEST_REFUSALS.has(code) || code === 'permission_denied') {
          problems.push(`${label(valid)}: documented without a success, the service answered ${fromService.status} ${fromService.text.slice(0, 300)}`);
        }
      } else if (fromMock.status !== firstSuccess(op)) {
        problems.push(`${label(valid)}: mock ${fromMock.status}, its documented success is ${firstSuccess(op)}: ${fromMock.text.slice(0, 200)}`);
      } else if (fromService.status !== fromMock.status) {
        const code = codeOf(fromService, style);
        const documented = String(fromService.status) in (op.raw.responses ?? {});
        // A refusal for state (see the top of this file): documented, and not a refusal of the request itself.
        if (!documented || fromService.status >= 500 || typeof code !== 'string' || REQUEST_REFUSALS.has(code)) {
          problems.push(`${label(valid)}: mock ${fromMock.status}, service ${fromService.status} ${fromService.text.slice(0, 300)}`);
        }
      }
      expect(problems).toEqual([]);
    },
    budget({ passwordHash: 2 }),
  );
});
