// Requests generated from the contract for the property-based fuzzer: for every operation of
// indexOperations(spec), valid requests (bodies and parameters drawn from their schemas), boundary
// ones, and broken ones. A new operation in the contract is fuzzed without anyone listing it.
import fc from 'fast-check';
import { deref, type JsonSchema, type OpenApiDocument, type OperationInfo } from '../../../src/contract/spec.js';
import { KeyInflector, type Inflection } from '../../../src/contract/inflection.js';

export interface FuzzRequest {
  operationId: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** What was done to the request, for failure reports. */
  label: string;
  /**
   * `invalid`: the request breaks the contract, so only a 4xx answer is right.
   * `either`: the request may or may not be acceptable (odd values); any documented answer is right.
   */
  expect: 'invalid' | 'either';
}

/** A way of presenting credentials: headers to add, and whether the service should accept them. */
export interface Credential {
  name: string;
  headers: Record<string, string>;
  /** True for credentials the service issued and that are still good. */
  genuine: boolean;
}

const MAX_DEPTH = 4;

/** Strings that have broken parsers, loggers and databases before. */
const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800', // a lone surrogate
  '\uFFFF',
  '\u202Eevil\u202C', // right-to-left override
  'e\u0301', // combining accent
  '👩‍👩‍👧‍👦',
  'ﷺ',
  '\u00A0',
  '\r\n\t',
  "' or 1=1 --",
  '"; drop table users; --',
  '${jndi:ldap://x}',
  '../../etc/passwd',
  '%00',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  'Ａ＠ｅｘａｍｐｌｅ．ｃｏｍ',
];

const oddString = fc.oneof(fc.constantFrom(...ODD_STRINGS), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }));

/** Any JSON value, small. */
const anyJson = fc.jsonValue({ maxDepth: 3 });

export class RequestArbitraries {
  private readonly inflector: KeyInflector;

  constructor(
    private readonly spec: OpenApiDocument,
    private readonly credentials: Credential[],
    private readonly bodyLimitBytes: number,
    /**
     * Ids of things that exist, by the collection they are in (`users`, `roles`, `api-keys`,
     * `sessions`): a path parameter after that collection's name is often one of them, so that
     * handlers find something to act on.
     */
    private readonly knownIds: Record<string, string[]> = {},
  ) {
    this.inflector = new KeyInflector(spec);
  }

  /** A valid value of a schema (honouring formats, bounds and enums as far as they are declared). */
  valid(rawSchema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
    const schema = deref(this.spec, rawSchema);
    if (!schema || depth > MAX_DEPTH) return anyJson;
    if (schema.const !== undefined) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    for (const group of ['oneOf', 'anyOf'] as const) {
      if (Array.isArray(schema[group])) return fc.oneof(...(schema[group] as JsonSchema[]).map((s) => this.valid(s, depth + 1)));
    }
    if (Array.isArray(schema.allOf)) {
      const merged = (schema.allOf as JsonSchema[]).map((s) => deref(this.spec, s) ?? {});
      return this.valid(Object.assign({}, ...merged, { allOf: undefined }), depth);
    }
    const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : ['object'];
    return fc.oneof(...types.map((type) => this.validOfType(type, schema, depth)));
  }

  private validOfType(type: string, schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
      case 'number':
        return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
      case 'string':
        return this.validString(schema);
      case 'array': {
        const min = schema.minItems ?? 0;
        const max = Math.min(schema.maxItems ?? 4, min + 4);
        return fc.array(this.valid(schema.items, depth + 1), { minLength: min, maxLength: max, ...(schema.uniqueItems ? {} : {}) }).map((items) =>
          schema.uniqueItems ? [...new Map(items.map((i) => [JSON.stringify(i), i])).values()] : items,
        );
      }
      default: {
        const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
        const required = new Set<string>(schema.required ?? []);
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, sub] of Object.entries(properties)) record[name] = this.valid(sub, depth + 1);
        return fc.record(record, { requiredKeys: [...required].filter((k) => k in properties) });
      }
    }
  }

  private validString(schema: JsonSchema): fc.Arbitrary<string> {
    const min = schema.minLength ?? 0;
    const max = Math.max(min, Math.min(schema.maxLength ?? 64, 300));
    const fit = (a: fc.Arbitrary<string>) => a.filter((s) => [...s].length >= min && [...s].length <= max && s.length <= (schema.maxLength ?? Infinity));
    switch (schema.format) {
      case 'email':
        return fit(fc.emailAddress());
      case 'uuid':
        return fc.uuid();
      case 'date-time':
        return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
      case 'date':
        return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
      default:
        if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= max);
        // Boundaries: the shortest and the longest allowed, and anything in between (any unicode).
        return fc.oneof(
          fc.string({ minLength: min, maxLength: Math.min(max, 40), unit: 'grapheme-ascii' }),
          fit(fc.string({ minLength: min, maxLength: Math.min(max, 40), unit: 'grapheme' })),
          fc.constant('x'.repeat(Math.max(min, 1))).filter((s) => s.length <= max),
          fc.constant('y'.repeat(max)),
        );
    }
  }

  /**
   * A value that breaks the schema: a wrong type, a missing required property, an extra property
   * where none are allowed, a string past its bounds, an `__proto__` key, a deep nest.
   * Returns null when the schema accepts anything (nothing can be broken there).
   */
  broken(rawSchema: JsonSchema | undefined, depth = 0): fc.Arbitrary<{ value: unknown; how: string }> | null {
    const schema = deref(this.spec, rawSchema);
    if (!schema || schema.oneOf || schema.anyOf || schema.allOf) return null;
    const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
    if (types.length === 0) return null;
    const options: fc.Arbitrary<{ value: unknown; how: string }>[] = [];
    const wrongType = anyJson.filter((v) => !matchesType(v, types));
    options.push(wrongType.map((value) => ({ value, how: `wrong type (${types.join('|')})` })));
    if (types.includes('string')) {
      if (schema.maxLength !== undefined) options.push(fc.constant({ value: 'z'.repeat(schema.maxLength + 1), how: 'string one past maxLength' }));
      if (schema.minLength > 0) options.push(fc.constant({ value: 'z'.repeat(schema.minLength - 1), how: 'string one short of minLength' }));
      if (Array.isArray(schema.enum)) options.push(oddString.filter((s) => !schema.enum.includes(s)).map((value) => ({ value, how: 'not in enum' })));
      if (schema.format === 'email' || schema.format === 'uuid' || schema.format === 'date-time')
        options.push(fc.constantFrom('not-an-email', 'x', '2026-13-45T99:99:99Z', '@@', 'a@').map((value) => ({ value, how: `bad ${schema.format}` })));
    }
    if (types.includes('integer')) {
      options.push(fc.double({ noInteger: true, noNaN: true, noDefaultInfinity: true }).map((value) => ({ value, how: 'fractional integer' })));
      if (schema.maximum !== undefined) options.push(fc.constant({ value: schema.maximum + 1, how: 'one past maximum' }));
      if (schema.minimum !== undefined) options.push(fc.constant({ value: schema.minimum - 1, how: 'one below minimum' }));
    }
    // A nest thousands deep in place of this value: parsers and walkers that recurse must not fall over.
    options.push(fc.integer({ min: 500, max: 5_000 }).map((n) => ({ value: deepNest(n), how: `nested ${n} deep` })));
    if (types.includes('object') && schema.properties && depth <= MAX_DEPTH) {
      const properties = schema.properties as Record<string, JsonSchema>;
      const required: string[] = schema.required ?? [];
      const base = this.valid(schema, depth) as fc.Arbitrary<Record<string, unknown>>;
      if (required.length > 0)
        options.push(
          fc.tuple(base, fc.constantFrom(...required)).map(([obj, key]) => {
            const copy = { ...obj };
            delete copy[key];
            return { value: copy, how: `missing ${key}` };
          }),
        );
      if (schema.additionalProperties === false) {
        options.push(
          fc.tuple(base, fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in properties)), anyJson).map(([obj, key, v]) => ({ value: { ...obj, [key]: v }, how: `extra property ${JSON.stringify(key)}` })),
        );
        // JSON.parse makes `__proto__` an own property; it must be refused like any extra key, never merged into a prototype.
        options.push(base.map((obj) => ({ value: withProtoKey(obj), how: '__proto__ key' })));
        options.push(base.map((obj) => ({ value: { ...obj, constructor: { prototype: { polluted: true } } }, how: 'constructor.prototype key' })));
      }
      for (const [name, sub] of Object.entries(properties)) {
        const inner = this.broken(sub, depth + 1);
        if (inner) options.push(fc.tuple(base, inner).map(([obj, b]) => ({ value: { ...obj, [name]: b.value }, how: `${name}: ${b.how}` })));
      }
    }
    return fc.oneof(...options);
  }

  /** Every kind of request for one operation. */
  forOperation(op: OperationInfo): fc.Arbitrary<FuzzRequest> {
    const kinds: fc.Arbitrary<FuzzRequest>[] = [this.wellFormed(op), this.brokenHeaders(op), this.brokenParameters(op)];
    if (op.requestBodySchema) kinds.push(this.brokenBody(op), this.brokenBody(op), this.brokenTransport(op));
    else kinds.push(this.unexpectedBody(op));
    return fc.oneof(...kinds);
  }

  /** No credential, or any of them; genuine ones three times as often, so that requests get past authentication to the handlers. */
  private credential(_op: OperationInfo) {
    const weighted = this.credentials.flatMap((c) => (c.genuine ? [c, c, c] : [c]));
    return fc.constantFrom<Credential | null>(null, ...weighted);
  }

  private inflection() {
    return fc.constantFrom<Inflection | undefined>(undefined, 'camel', 'dash', 'snake', 'pascal');
  }

  private concretePath(op: OperationInfo): fc.Arbitrary<{ path: string; broken: boolean }> {
    const params = this.parameters(op, 'path');
    if (params.length === 0) return fc.constant({ path: op.path, broken: false });
    const values = params.map((p) => {
      const collection = new RegExp(`/([^/]+)/\\{${p.name}\\}`).exec(op.path)?.[1] ?? '';
      const known = this.knownIds[collection] ?? [];
      return fc.oneof(
        { arbitrary: this.valid(p.schema).map((v) => ({ v: String(v), broken: false })), weight: 3 },
        ...(known.length > 0 ? [{ arbitrary: fc.constantFrom(...known).map((v) => ({ v, broken: false })), weight: 3 }] : []),
        { arbitrary: oddString.filter((s) => s.length > 0).map((v) => ({ v, broken: true })), weight: 1 },
      );
    });
    return fc.tuple(...values).map((vs) => {
      let path = op.path;
      params.forEach((p, i) => (path = path.replace(`{${p.name}}`, encodePathSegment(vs[i]!.v))));
      return { path, broken: false }; // an odd id is a legitimate 4xx, not necessarily invalid per contract
    });
  }

  private parameters(op: OperationInfo, where: 'query' | 'path' | 'header'): { name: string; schema: JsonSchema; required: boolean }[] {
    // Parameters declared on the path item (as `{id}` is) count for each of its operations.
    const pathItem = ((this.spec.paths ?? {}) as Record<string, JsonSchema>)[op.path];
    return [...((pathItem?.parameters ?? []) as JsonSchema[]), ...((op.raw.parameters ?? []) as JsonSchema[])]
      .map((p) => deref(this.spec, p)!)
      .filter((p) => p.in === where && p.name !== 'x-api-inflection')
      .map((p) => ({ name: p.name, schema: p.schema, required: Boolean(p.required) }));
  }

  private validQuery(op: OperationInfo): fc.Arbitrary<Record<string, string>> {
    const params = this.parameters(op, 'query');
    const record: Record<string, fc.Arbitrary<string>> = {};
    for (const p of params) record[p.name] = this.valid(p.schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    return fc.record(record, { requiredKeys: params.filter((p) => p.required).map((p) => p.name) });
  }

  private build(op: OperationInfo, parts: { path: string; query?: Record<string, string>; headers: Record<string, string>; body?: string; label: string; expect: FuzzRequest['expect'] }): FuzzRequest {
    const qs = new URLSearchParams(parts.query ?? {}).toString();
    return {
      operationId: op.operationId,
      method: op.method.toUpperCase(),
      path: qs ? `${parts.path}?${qs}` : parts.path,
      headers: { accept: 'application/json', ...parts.headers },
      ...(parts.body !== undefined ? { body: parts.body } : {}),
      label: parts.label,
      expect: parts.expect,
    };
  }

  private bodyFor(op: OperationInfo, value: unknown, style: Inflection | undefined): string {
    return rawJson(style ? this.inflector.toStyle(value, op.requestBodySchema, style) : value);
  }

  /** Everything as the contract wants it, with any credential and inflection. */
  private wellFormed(op: OperationInfo): fc.Arbitrary<FuzzRequest> {
    return fc
      .record({
        path: this.concretePath(op),
        query: this.validQuery(op),
        credential: this.credential(op),
        style: this.inflection(),
        body: op.requestBodySchema ? this.valid(op.requestBodySchema) : fc.constant(undefined),
      })
      .map(({ path, query, credential, style, body }) =>
        this.build(op, {
          path: path.path,
          query,
          headers: {
            ...(credential?.headers ?? {}),
            ...(style ? { 'x-api-inflection': style } : {}),
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: this.bodyFor(op, body, style) } : {}),
          label: `well-formed, credential ${credential?.name ?? 'none'}, inflection ${style ?? 'none'}`,
          expect: 'either',
        }),
      );
  }

  /** A body that breaks its schema somewhere, in any inflection. */
  private brokenBody(op: OperationInfo): fc.Arbitrary<FuzzRequest> {
    const broken = this.broken(op.requestBodySchema);
    if (!broken) return this.wellFormed(op);
    return fc.record({ broken, credential: this.credential(op), style: this.inflection(), path: this.concretePath(op) }).map(({ broken: b, credential, style, path }) =>
      this.build(op, {
        path: path.path,
        headers: { ...(credential?.headers ?? {}), ...(style ? { 'x-api-inflection': style } : {}), 'content-type': 'application/json' },
        body: this.bodyFor(op, b.value, b.how.includes('__proto__') ? undefined : style),
        label: `broken body (${b.how}), credential ${credential?.name ?? 'none'}, inflection ${style ?? 'none'}`,
        expect: 'invalid',
      }),
    );
  }

  /** The bytes themselves are wrong: malformed JSON, wrong content types, too large, odd encodings. */
  private brokenTransport(op: OperationInfo): fc.Arbitrary<FuzzRequest> {
    const limit = this.bodyLimitBytes;
    const cases = fc.oneof(
      fc.constantFrom('{', '{"session": ', '[1,2', '{"a":1,}', "{'a':1}", 'nul', '"\\uZZZZ"', '\u0000', '{"a":"\\ud800"}', '{"a":1}{"b":2}').map((body) => ({ body, type: 'application/json', how: `malformed JSON ${JSON.stringify(body)}` })),
      fc.constantFrom('123', '"str"', 'true', 'null', '[]').map((body) => ({ body, type: 'application/json', how: `non-object JSON ${body}` })),
      fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/jsonx', 'json', '*/*', '').map((type) => ({ body: '{"a":1}', type, how: `content type ${JSON.stringify(type)}` })),
      fc.constant({ body: `{"session":{"email":"a@b.co","password":"${'p'.repeat(limit + 10)}"}}`, type: 'application/json', how: 'body past the size limit' }),
      fc.integer({ min: 1_000, max: Math.floor(limit / 2) - 10 }).map((n) => ({ body: `${'['.repeat(n)}${']'.repeat(n)}`, type: 'application/json', how: `array nested ${n} deep` })),
      fc.integer({ min: 1_000, max: Math.floor(limit / 6) }).map((n) => ({ body: `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`, type: 'application/json', how: `object nested ${n} deep` })),
      fc.constant({ body: '', type: 'application/json', how: 'empty body' }),
    );
    return fc.record({ c: cases, credential: this.credential(op), style: this.inflection() }).map(({ c, credential, style }) =>
      this.build(op, {
        path: op.path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
        headers: { ...(credential?.headers ?? {}), ...(style ? { 'x-api-inflection': style } : {}), ...(c.type ? { 'content-type': c.type } : {}) },
        body: c.body,
        label: `${c.how}, credential ${credential?.name ?? 'none'}`,
        expect: 'invalid',
      }),
    );
  }

  /** A body sent to an operation that takes none. */
  private unexpectedBody(op: OperationInfo): fc.Arbitrary<FuzzRequest> {
    return fc.record({ body: anyJson, credential: this.credential(op), path: this.concretePath(op) }).map(({ body, credential, path }) =>
      this.build(op, {
        path: path.path,
        headers: { ...(credential?.headers ?? {}), 'content-type': 'application/json' },
        body: JSON.stringify(body),
        label: `unexpected body, credential ${credential?.name ?? 'none'}`,
        expect: 'either',
      }),
    );
  }

  /** Headers that are wrong: an unknown inflection, both credentials, a huge header, odd bytes. */
  private brokenHeaders(op: OperationInfo): fc.Arbitrary<FuzzRequest> {
    const latin1 = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 60 });
    const cases = fc.oneof(
      fc.oneof(latin1, fc.constantFrom('CAMEL', ' camel ', 'kebab', 'Snake_Case', 'camel,snake')).map((v) => ({ headers: { 'x-api-inflection': v }, how: `inflection ${JSON.stringify(v)}`, invalid: false })),
      fc.tuple(latin1, latin1).map(([k, b]) => ({ headers: { 'x-api-key': k || 'k', authorization: `Bearer ${b || 'b'}` }, how: 'both credentials', invalid: op.security.length > 0 })),
      fc.oneof(latin1, fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'bearer  a b', 'Bearer boa_x_y', 'BEARER ' + 'A'.repeat(2000))).map((v) => ({ headers: { authorization: v }, how: `authorization ${JSON.stringify(v.slice(0, 40))}`, invalid: false })),
      fc.oneof(latin1, fc.constantFrom('bok_' + 'A'.repeat(43) + '_AAAAAA', ' ', 'x'.repeat(5000))).map((v) => ({ headers: { 'x-api-key': v }, how: `x-api-key ${JSON.stringify(v.slice(0, 40))}`, invalid: false })),
      fc.integer({ min: 8_000, max: 70_000 }).map((n) => ({ headers: { 'x-padding': 'p'.repeat(n) }, how: `a header ${n} bytes long`, invalid: false })),
      fc.integer({ min: 100, max: 300 }).map((n) => ({ headers: Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, String(i)])), how: `${n} extra headers`, invalid: false })),
      fc.constantFrom('\u00ff\u00fe', 'x-request-id'.repeat(20), '../../', '<>').map((v) => ({ headers: { 'x-request-id': v }, how: `x-request-id ${JSON.stringify(v)}`, invalid: false })),
      fc.constantFrom('text/html', 'application/xml', 'image/png', '*/*;q=0', 'application/json;q=0').map((v) => ({ headers: { accept: v }, how: `accept ${v}`, invalid: false })),
    );
    return fc.record({ c: cases, credential: this.credential(op), body: op.requestBodySchema ? this.valid(op.requestBodySchema) : fc.constant(undefined) }).map(({ c, credential, body }) =>
      this.build(op, {
        path: op.path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
        headers: { ...(credential?.headers ?? {}), ...c.headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        label: `${c.how}, credential ${credential?.name ?? 'none'}`,
        expect: c.invalid ? 'invalid' : 'either',
      }),
    );
  }

  /** Query strings with unknown or badly typed parameters. */
  private brokenParameters(op: OperationInfo): fc.Arbitrary<FuzzRequest> {
    const params = this.parameters(op, 'query');
    const cases: fc.Arbitrary<{ query: Record<string, string>; how: string; invalid: boolean }>[] = [
      fc.tuple(fc.string({ minLength: 1, maxLength: 10 }).filter((k) => !params.some((p) => p.name === k)), oddString).map(([k, v]) => ({ query: { [k]: v }, how: `unknown query parameter ${JSON.stringify(k)}`, invalid: true })),
      // express-openapi-validator reads a key holding `[` as deepObject syntax and lets it through;
      // src/http/unknown-query.ts refuses it, so it must fail like any undeclared key.
      fc.string({ maxLength: 6 }).map((k) => ({ query: { [`[${k}`]: '1' }, how: `query key "[${k}"`, invalid: true })),
      fc.constant({ query: { __proto__: 'x' } as Record<string, string>, how: 'query __proto__', invalid: false }),
    ];
    for (const p of params) {
      const broken = this.broken(p.schema);
      if (broken) cases.push(broken.map((b) => ({ query: { [p.name]: typeof b.value === 'string' ? b.value : JSON.stringify(b.value) }, how: `query ${p.name}: ${b.how}`, invalid: false })));
      cases.push(oddString.map((v) => ({ query: { [p.name]: v }, how: `query ${p.name} odd string`, invalid: false })));
    }
    return fc.record({ c: fc.oneof(...cases), credential: this.credential(op), body: op.requestBodySchema ? this.valid(op.requestBodySchema) : fc.constant(undefined) }).map(({ c, credential, body }) => {
      const req = this.build(op, {
        path: op.path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
        query: c.query,
        headers: { ...(credential?.headers ?? {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        label: `${c.how}, credential ${credential?.name ?? 'none'}`,
        expect: c.invalid ? 'invalid' : 'either',
      });
      // URLSearchParams drops a `__proto__` own property of a literal: write it by hand.
      if (c.how === 'query __proto__') req.path = `${req.path.split('?')[0]}?__proto__=x&__proto__[polluted]=1`;
      return req;
    });
  }
}

/**
 * Percent-encodes; a lone surrogate (not encodable) becomes invalid UTF-8 bytes, a case of its own.
 * A segment of dots only (`.`, `..`) cannot be sent: the HTTP client removes it as a dot segment,
 * encoded or not (the URL standard counts `%2e` as a dot too), so `/tasks/.` went out as `/tasks/`
 * (the list) while the fuzzer checked the answer against getTask. It gets a character more, and
 * stays a malformed id.
 */
function encodePathSegment(value: string): string {
  if (/^\.+$/.test(value)) return `${value}_`;
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

function matchesType(value: unknown, types: string[]): boolean {
  return types.some((t) => {
    switch (t) {
      case 'null':
        return value === null;
      case 'string':
        return typeof value === 'string';
      case 'boolean':
        return typeof value === 'boolean';
      case 'integer':
        return typeof value === 'number' && Number.isInteger(value);
      case 'number':
        return typeof value === 'number';
      case 'array':
        return Array.isArray(value);
      case 'object':
        return typeof value === 'object' && value !== null && !Array.isArray(value);
      default:
        return false;
    }
  });
}

/**
 * A placeholder for a nest `depth` levels deep; rawJson() writes the nest itself as text, since
 * JSON.stringify recurses and would overflow the stack of the test before reaching the server.
 */
function deepNest(depth: number): string {
  return `__DEEP_${depth}__`;
}

function deepNestText(depth: number): string {
  const half = Math.floor(depth / 2);
  return `${'{"a":['.repeat(half)}1${']}'.repeat(half)}`;
}

const PROTO_MARKER = '"__PROTO_KEY__"';

/** An object whose JSON text carries a literal `__proto__` key (JSON.stringify would drop it). */
function withProtoKey(obj: Record<string, unknown>): unknown {
  return { ...obj, __PROTO_KEY__: { polluted: true, isAdmin: true } };
}

/** JSON text, with the `__proto__` marker written as the real key and deep-nest placeholders expanded. */
function rawJson(value: unknown): string {
  return JSON.stringify(value)
    .split(PROTO_MARKER)
    .join('"__proto__"')
    .replace(/"__DEEP_(\d+)__"/g, (_m, depth: string) => deepNestText(Number(depth)));
}
