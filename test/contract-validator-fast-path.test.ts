// The contract validator's fast path for requests without a body (src/contract/validator.ts) answers
// as the library's own path does, byte for byte. Two apps are built from the real parts (createApp),
// one with the fast path and one without (`bodilessFastPath: false`), with handlers that only say
// what they were given and authenticators that let every credential in: no database is involved,
// as validation reads none. Every bodiless operation of the contract gets requests derived from its
// parameters, valid and invalid (a catalogue of hostile values for each parameter, then random
// combinations from fast-check with a fixed seed), each sent to both apps as the same raw bytes.
// Compared: the status, every response header (but Date and the request id), the body (the problem
// and its `errors`, in order), and what the handler received: req.query, req.params and req.headers,
// printed by util.inspect (so a number is not a string, a key order or a prototype counts).
// It also checks that the fast path is taken: by a valid request of every bodiless operation, and
// by most requests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { parse as legacyUrlParse } from 'node:url';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogs, spec } from './support/context.js';
import { createApp } from '../src/http/app.js';
import { deref, indexOperations, type JsonSchema, type OperationInfo } from '../src/contract/spec.js';
import type { Authenticators, Principal } from '../src/auth/principal.js';
import type { HandlerMap } from '../src/http/handler-types.js';
import { PLAIN_URL } from '../src/contract/validator.js';

const requireFromHere = createRequire(import.meta.url);
const { RequestValidator } = requireFromHere('express-openapi-validator/dist/middlewares/openapi.request.validator.js') as {
  RequestValidator: { prototype: { validate: (req: http.IncomingMessage, ...rest: unknown[]) => unknown } };
};

/** The operations that take no body: the ones the fast path is for. */
const bodiless = indexOperations(spec).filter((op) => op.raw.requestBody === undefined);

interface Param {
  name: string;
  in: 'query' | 'header' | 'path';
  required: boolean;
  allowReserved: boolean;
  schema: JsonSchema;
}

const parametersOf = (op: OperationInfo): Param[] => {
  const item = spec.paths[op.path]!;
  const all = [...((item.parameters as JsonSchema[] | undefined) ?? []), ...((op.raw.parameters as JsonSchema[] | undefined) ?? [])].map((p) => deref(spec, p)!);
  return all.map((p) => {
    const schema = { ...deref(spec, p.schema) };
    if (schema.items) schema.items = deref(spec, schema.items);
    return { name: p.name, in: p.in, required: p.required === true, allowReserved: p.allowReserved === true, schema };
  });
};

// ---- Values ----------------------------------------------------------------------------------

const UUID = '3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b';
const DATE_TIME = '2026-11-23T00:00:00Z';

/** A value the contract accepts, raw for a URL (percent-encoded where needed). */
function validValue(p: Param): string {
  const s = p.schema;
  if (s.type === 'array') return String(s.items?.enum?.[0] ?? 'a');
  if (s.enum) return String(s.enum[0]);
  if (s.type === 'integer' || s.type === 'number') return String(s.default ?? s.minimum ?? 1);
  if (s.format === 'uuid') return UUID;
  if (s.format === 'date-time') {
    const value = p.name === 'until' ? '2026-11-30T00:00:00Z' : DATE_TIME;
    // A `:` is a reserved character: sent as it is only where the parameter allows it.
    return p.allowReserved ? value : value.replaceAll(':', '%3A');
  }
  if (typeof s.pattern === 'string' && s.pattern.includes('me|')) return 'me';
  if (p.in === 'header' && /match/i.test(p.name)) return '"abc"';
  return 'abc';
}

/** Values every parameter is tried with: the kinds a query can carry, and URL syntax at its edges. */
const HOSTILE = [
  '', 'x', 'abc', 'ABC', 'a,b', 'a,,b', ',', 'a%2Cb', '%', '%ZZ', '%2', '%20', '%201', 'a%20b', '+', 'a+b', '%2B', ':', '%3A',
  "'", '@', '!', '$', '(', ')', '*', ';', '/', '?', '[', ']', '%5B', '%5D', '=', 'a=b', '~', '-', '.', '_', '%7E', '%C3%A9', '%E2%82%AC',
  'null', 'true', 'false', '{}', '[]', '%7B%7D', '"x"', '%22x%22', '1', '0', '-1', '1.5', '1e2', '007', '0x10', '2147483648', '-0',
  '99999999999999999999', 'NaN', 'me', 'ME', UUID, UUID.toUpperCase(), UUID.slice(1), `${UUID}x`, DATE_TIME, '2026-11-23T00:00:00+01:00',
  '2026-11-23T00:00:00%2B01:00', '2026-11-23t00:00:00z', '2026-11-23', '2026-13-01T00:00:00Z', '2026-11-23T00:00:00', 'a'.repeat(37),
  'a'.repeat(101), 'a'.repeat(201), 'a'.repeat(1025), 'created_at', 'due_at', 'active', 'disabled', 'open', 'done', 'user', 'camel',
];

/** The schema's own values, valid and at its bounds: enum members, lists of them, integers around the limits. */
function schemaValues(p: Param): string[] {
  const s = p.schema;
  const values: string[] = [];
  const members = (s.type === 'array' ? s.items?.enum : s.enum) as unknown[] | undefined;
  if (members) {
    values.push(...members.map(String), String(members[0]).toUpperCase(), `${String(members[0])} `.trim() + 'x');
    if (s.type === 'array') {
      values.push(members.slice(0, 3).join(','), `${String(members[0])},${String(members[0])}`, members.join(','), `${String(members[0])},`, `,${String(members[0])}`);
      values.push(`${String(members[0])}%2C${String(members[1] ?? members[0])}`);
    }
  }
  for (const bound of [s.minimum, s.maximum] as (number | undefined)[]) {
    if (typeof bound === 'number') values.push(String(bound), String(bound - 1), String(bound + 1));
  }
  if (typeof s.maxLength === 'number') values.push('a'.repeat(s.maxLength), 'a'.repeat(s.maxLength + 1));
  return values;
}

/** Header values: the inflection styles, entity tags, idempotency keys, and junk. */
const HEADER_VALUES = ['', 'snake', 'camel', 'dash', 'pascal', 'CAMEL', 'kebab', ' camel', '"abc"', 'W/"1"', '*', '"a", "b"', 'abc', '"', 'k-1', ' k', 'a'.repeat(256), 'a'.repeat(1025)];

/** Path segments: valid ids, their near misses, percent-encoding (valid, invalid, an encoded slash). */
const PATH_VALUES = ['abc', UUID, UUID.toUpperCase(), 'not-a-uuid', 'a'.repeat(37), 'a'.repeat(101), 'a'.repeat(201), '%E2%82%AC', '%ZZ', 'a%2Fb', '%20', 'me', '1', 'null'];

// ---- Requests ----------------------------------------------------------------------------------

interface Probe {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** The credential an operation accepts, so that validation (which comes first) is what answers. */
function credentialOf(op: OperationInfo): Record<string, string> {
  if (op.security.includes('apiKey')) return { 'x-api-key': 'any-key' };
  if (op.security.length > 0) return { authorization: 'Bearer any-token' };
  return {};
}

/** A request of `op`: each parameter's raw query pairs (already `k=v`), header values and path segments. */
function probe(op: OperationInfo, parts: { query?: string[]; queryString?: string; headers?: Record<string, string>; path?: Record<string, string>; method?: string; body?: string }): Probe {
  const params = parametersOf(op);
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => parts.path?.[name] ?? validValue(params.find((p) => p.name === name)!));
  const queryString = parts.queryString ?? (parts.query && parts.query.length > 0 ? `?${parts.query.join('&')}` : '');
  const headers = { ...credentialOf(op), ...parts.headers };
  if (parts.body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(parts.body)) });
  return { method: parts.method ?? op.method.toUpperCase(), path: `${path}${queryString}`, headers, body: parts.body };
}

/** The required query parameters with valid values, so that one other parameter's value is what is judged. */
const requiredQuery = (op: OperationInfo, except?: string) =>
  parametersOf(op)
    .filter((p) => p.in === 'query' && p.required && p.name !== except)
    .map((p) => `${p.name}=${validValue(p)}`);

/** The request every parameter of which is valid (optional ones too): it must pass, and by the fast path. */
function validProbe(op: OperationInfo): Probe {
  const params = parametersOf(op);
  const query = params.filter((p) => p.in === 'query').map((p) => `${p.name}=${validValue(p)}`);
  const headers = Object.fromEntries(params.filter((p) => p.in === 'header').map((p) => [p.name, validValue(p)]));
  return probe(op, { query, headers });
}

/** Each parameter alone with each hostile value, in the ways a key can be written; then URL-level oddities. */
function catalogue(op: OperationInfo): Probe[] {
  const params = parametersOf(op);
  const probes: Probe[] = [validProbe(op), probe(op, { query: requiredQuery(op) }), probe(op, {}), probe(op, { queryString: '?' })];
  for (const p of params) {
    const values = [...new Set([...HOSTILE, ...schemaValues(p), validValue(p)])];
    if (p.in === 'query') {
      const rest = requiredQuery(op, p.name);
      const encodedName = `%${p.name.charCodeAt(0).toString(16).toUpperCase()}${p.name.slice(1)}`;
      for (const value of values) probes.push(probe(op, { query: [...rest, `${p.name}=${value}`] }));
      for (const value of ['', 'a,b', 'x:y', validValue(p)]) probes.push(probe(op, { query: [`${encodedName}=${value}`, ...rest] }));
      probes.push(
        probe(op, { query: [...rest, p.name] }),
        probe(op, { query: [p.name, ...rest] }),
        probe(op, { query: [...rest, `${p.name}=${validValue(p)}`, `${p.name}=${validValue(p)}`] }),
        probe(op, { query: [...rest, `${p.name}=${validValue(p)}`, `${p.name}=x:y`] }),
        probe(op, { query: [...rest, `${p.name}=${validValue(p)}`, `${p.name}=`] }),
        probe(op, { query: [...rest, `${p.name}=${validValue(p)}=x`] }),
        probe(op, { query: [...rest, `${p.name}[]=${validValue(p)}`] }),
        probe(op, { query: [...rest, `${p.name}[a]=${validValue(p)}`] }),
        probe(op, { queryString: `??${[...rest, `${p.name}=${validValue(p)}`].join('&')}` }),
        probe(op, { queryString: `?&&${[...rest, `${p.name}=${validValue(p)}`].join('&&')}&` }),
        probe(op, { queryString: `?${[...rest, `${p.name}=a@b`].join('&')}` }),
        probe(op, { queryString: `?${[...rest, `${p.name}=${validValue(p)}`].join('&')}#frag` }),
      );
    } else if (p.in === 'header') {
      for (const value of new Set([...HEADER_VALUES, ...schemaValues(p), validValue(p)])) probes.push(probe(op, { query: requiredQuery(op), headers: { [p.name]: value } }));
    } else {
      for (const value of new Set([...PATH_VALUES, ...schemaValues(p), validValue(p)])) probes.push(probe(op, { query: requiredQuery(op), path: { [p.name]: value } }));
    }
  }
  // Several parameters wrong at once, in the reverse of the contract's order: which one is reported first.
  const queryParams = params.filter((p) => p.in === 'query').reverse();
  for (const value of ['x:y', '', 'a,b', 'x', '-1']) probes.push(probe(op, { query: queryParams.map((p) => `${p.name}=${value}`) }));
  // Keys the operation does not declare (refused before the validator, by src/http/unknown-query.ts).
  probes.push(probe(op, { query: [...requiredQuery(op), 'unknown=1'] }), probe(op, { query: [...requiredQuery(op), '__proto__=x'] }));
  // A body sent to an operation that takes none, a Content-Type with none, a HEAD for a GET.
  probes.push(
    probe(op, { query: requiredQuery(op), body: '{"a":1}' }),
    probe(op, { query: requiredQuery(op), headers: { 'content-type': 'text/plain; x=1' } }),
    probe(op, { query: requiredQuery(op), headers: { 'x-api-inflection': 'camel' } }),
  );
  if (op.method === 'get') probes.push({ ...validProbe(op), method: 'HEAD' });
  return probes;
}

/** Random requests of `op`: any subset of its parameters, each with a value from the pools above, in any order. */
function randomProbes(op: OperationInfo): fc.Arbitrary<Probe> {
  const params = parametersOf(op);
  const query = params.filter((p) => p.in === 'query');
  const pair = (p: Param) =>
    fc.tuple(fc.constantFrom(...new Set([...HOSTILE, ...schemaValues(p), validValue(p), validValue(p), validValue(p)])), fc.constantFrom('=', '=', '=', '', '=x='), fc.boolean()).map(([value, eq, encodeKey]) => {
      const key = encodeKey ? `%${p.name.charCodeAt(0).toString(16)}${p.name.slice(1)}` : p.name;
      return eq === '' ? key : eq === '=x=' ? `${key}=${value}=x` : `${key}=${value}`;
    });
  const queryPairs = query.length === 0 ? fc.constant<string[]>([]) : fc.array(fc.oneof(...query.map(pair)), { maxLength: 6 });
  const headerParams = params.filter((p) => p.in === 'header');
  const headers = fc.record(Object.fromEntries(headerParams.map((p) => [p.name, fc.constantFrom(...HEADER_VALUES, validValue(p))])), { requiredKeys: [] });
  const pathParams = params.filter((p) => p.in === 'path');
  const path = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, fc.constantFrom(...PATH_VALUES, validValue(p), validValue(p))])), { requiredKeys: [] });
  return fc
    .record({ pairs: queryPairs, required: fc.boolean(), headers, path, head: fc.boolean() })
    .chain(({ pairs, required, headers, path, head }) =>
      fc.shuffledSubarray([...(required ? requiredQuery(op) : []), ...pairs], { minLength: 0 }).map((ordered) =>
        probe(op, { query: ordered, headers: headers as Record<string, string>, path: path as Record<string, string>, method: head && op.method === 'get' ? 'HEAD' : undefined }),
      ),
    );
}

// ---- The two apps --------------------------------------------------------------------------------

/** What the handler was given, as the handler sees it. */
const seen = (input: { query: unknown; path: unknown; headers: Record<string, unknown> }) => {
  const { host: _host, ...headers } = input.headers;
  return Buffer.from(inspect({ query: input.query, path: input.path, headers }, { depth: 10, breakLength: Infinity })).toString('base64');
};

const handlers = new Proxy(
  {},
  {
    get: () => async (input: { query: unknown; path: unknown; headers: Record<string, unknown> }) => ({ status: 204, headers: { 'x-seen': seen(input) } }),
  },
) as HandlerMap;

const everything = { has: () => true } as unknown as ReadonlySet<string>;
const authenticators: Authenticators = {
  apiKey: async (): Promise<Principal> => ({ kind: 'api_key', apiKeyId: UUID, permissions: everything }),
  bearer: async (): Promise<Principal> => ({ kind: 'user', userId: UUID, sessionId: UUID, permissions: everything }),
  stepUp: async () => {},
};

function start(bodilessFastPath: boolean) {
  const app = createApp({
    spec,
    db: {} as never,
    logger: captureLogs().logger,
    handlers,
    authenticators,
    options: { validateResponses: false, trustProxy: false, bodyLimitBytes: 100_000, bodilessFastPath },
  });
  const server = http.createServer(app);
  return new Promise<http.Server>((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  error?: string;
}

/** Sends the probe's bytes as they are (no URL normalisation) and reads the answer. */
function send(server: http.Server, p: Probe): Promise<Answer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve) => {
    const outgoing = http.request({ host: '127.0.0.1', port, method: p.method, path: p.path, headers: p.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.on('error', (error) => resolve({ status: 0, headers: {}, body: '', error: error.message }));
    outgoing.end(p.body);
  });
}

/** The answer with what differs between any two requests (the date, the request id) taken out. */
function comparable(answer: Answer) {
  const id = String(answer.headers['x-request-id'] ?? '');
  const { date: _date, 'x-request-id': _id, 'x-seen': seenBy, ...headers } = answer.headers;
  const strip = (text: string) => (id ? text.split(id).join('<request id>') : text);
  return {
    status: answer.status,
    error: answer.error,
    headers: strip(JSON.stringify(headers)),
    body: strip(answer.body),
    handlerSaw: seenBy === undefined ? undefined : Buffer.from(String(seenBy), 'base64').toString('utf8'),
  };
}

let fast: http.Server;
let library: http.Server;
/** The probe ids for which the fast app called the library's validator. */
const libraryCalls = new Set<string>();
const original = RequestValidator.prototype.validate;
let counter = 0;

beforeAll(async () => {
  [fast, library] = await Promise.all([start(true), start(false)]);
  const fastPort = (fast.address() as AddressInfo).port;
  RequestValidator.prototype.validate = function (req, ...rest) {
    if (req.socket.localPort === fastPort) libraryCalls.add(String(req.headers['x-probe']));
    return original.call(this, req, ...rest);
  };
});

afterAll(async () => {
  RequestValidator.prototype.validate = original;
  agent.destroy();
  await Promise.all([fast, library].map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Sends `p` to both apps (as the same bytes, one probe id) and says whether the fast app took the fast path. */
async function compare(p: Probe): Promise<{ tookFastPath: boolean; status: number }> {
  const id = String(++counter);
  const tagged = { ...p, headers: { ...p.headers, 'x-probe': id } };
  const [byFast, byLibrary] = await Promise.all([send(fast, tagged), send(library, tagged)]);
  expect(comparable(byFast), `${p.method} ${p.path} ${JSON.stringify(p.headers)}`).toEqual(comparable(byLibrary));
  // Bad input is refused, never a 500, on either path.
  expect(byLibrary.status, `${p.method} ${p.path} ${JSON.stringify(p.headers)}`).toBeLessThan(500);
  return { tookFastPath: !libraryCalls.has(id), status: byFast.status };
}

describe('the contract validator’s fast path for bodiless requests', () => {
  it('is what url.parse reads: for a URL it takes as plain, the query is everything after the first "?"', () => {
    const char = fc.constantFrom(...'/?#@\\&=,:;+%\'"{}|^`<>[]!$()*~-._aZ09 \t\u00a0é'.split(''));
    fc.assert(
      fc.property(fc.string({ unit: char, maxLength: 24 }), (tail) => {
        const url = `/${tail}`;
        if (!PLAIN_URL.test(url)) return;
        const mark = url.indexOf('?');
        expect(legacyUrlParse(url).query).toBe(mark < 0 ? null : url.slice(mark + 1));
      }),
      { numRuns: 20_000, seed: 34 },
    );
  });

  it('refuses a comma-separated parameter written as a key alone, as an empty one (the library threw a TypeError: 500)', async () => {
    const tasks = bodiless.find((op) => op.operationId === 'listTasks')!;
    for (const query of ['?status', '?status&limit=5', '?limit=5&status', '?search=a&status']) {
      const res = await send(fast, { method: 'GET', path: `/tasks${query}`, headers: credentialOf(tasks) });
      expect(res.status, query).toBe(400);
      expect(JSON.parse(res.body), query).toMatchObject({ code: 'validation_failed', errors: [{ location: 'request/query/status', message: "Empty value found for query parameter 'status'" }] });
      await compare({ method: 'GET', path: `/tasks${query}`, headers: credentialOf(tasks) });
    }
  });

  // The timeout is a guard against a hang, not a speed check: ~22,000 pairs of requests, one to two
  // minutes on a busy two-core machine.
  it('answers as the library does, and hands the handler the same query, path parameters and headers, for every bodiless operation', { timeout: 600_000 }, async () => {
    expect(bodiless.length).toBeGreaterThan(50);
    let total = 0;
    let byFastPath = 0;
    for (const op of bodiless) {
      const valid = await compare(validProbe(op));
      expect(valid.status, `${op.method} ${op.path}: its valid request`).toBe(204);
      expect(valid.tookFastPath, `${op.method} ${op.path}: its valid request takes the fast path`).toBe(true);
      const probes = catalogue(op);
      for (let i = 0; i < probes.length; i += 8) {
        for (const { tookFastPath } of await Promise.all(probes.slice(i, i + 8).map(compare))) {
          total += 1;
          if (tookFastPath) byFastPath += 1;
        }
      }
      await fc.assert(
        fc.asyncProperty(randomProbes(op), async (p) => {
          const { tookFastPath } = await compare(p);
          total += 1;
          if (tookFastPath) byFastPath += 1;
        }),
        { numRuns: 40, seed: 34, endOnFailure: true },
      );
    }
    // Most requests take it: the library's path is for the few this path does not reproduce.
    expect(byFastPath / total).toBeGreaterThan(0.8);
  });
});
