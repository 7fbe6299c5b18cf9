// The bundled contract (generated/openapi.json) and an index of its operations. Everything the
// server knows about routes, security and permissions comes from here.
import { readFileSync } from 'node:fs';
import { BUNDLED_SPEC_PATH } from '../paths.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonSchema = Record<string, any>;
export type OpenApiDocument = JsonSchema & { paths: Record<string, Record<string, JsonSchema>> };

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * `scimBearer`: an API key sent as `Authorization: Bearer <key>` (how Entra ID and Okta send a SCIM
 * application's token), accepted only by the operations that declare it (src/http/authenticate.ts).
 */
export type SecurityScheme = 'apiKey' | 'bearerAuth' | 'scimBearer';

/** JSON media types, in the order a body's schema is looked for: SCIM's own (RFC 7644) reads as JSON too. */
const JSON_MEDIA_TYPES = ['application/json', 'application/problem+json', 'application/scim+json'];
const jsonSchemaOf = (content: JsonSchema | undefined) => JSON_MEDIA_TYPES.map((type) => content?.[type]?.schema).find(Boolean) as JsonSchema | undefined;

export interface OperationInfo {
  operationId: string;
  method: HttpMethod;
  /** The OpenAPI path template, e.g. `/users/{id}`. */
  path: string;
  /** The same path as an Express route, e.g. `/users/:id`. */
  expressPath: string;
  /** Schemes any one of which authenticates the request; empty for public operations. */
  security: SecurityScheme[];
  /** `x-required-permission`: a permission name, or `null` when any authenticated caller may call it. */
  requiredPermission: string | null;
  /** Names of the query parameters the operation (or its path item) declares. */
  queryParameters: ReadonlySet<string>;
  /** Names of the header parameters it declares, lower-case (`idempotency-key`, `if-match`, ...). */
  headerParameters: ReadonlySet<string>;
  requestBodySchema: JsonSchema | undefined;
  /** JSON response schemas by status code. */
  responseSchemas: Map<number, JsonSchema>;
  /** The raw operation object of the contract, for extensions read by one feature only. */
  raw: JsonSchema;
}

/** A fresh copy of the bundled contract (or of another document), for a caller that hands it to a library. */
export function loadSpec(path = BUNDLED_SPEC_PATH): OpenApiDocument {
  return JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument;
}

let shared: OpenApiDocument | undefined;

/** The bundled contract, parsed once per process and frozen, for the modules that only read it. */
export function readContract(): OpenApiDocument {
  shared ??= deepFreeze(loadSpec());
  return shared;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Follows a local `$ref` (`#/components/...`) until it reaches a schema object. */
export function deref(spec: OpenApiDocument, schema: JsonSchema | undefined): JsonSchema | undefined {
  let current = schema;
  for (let hops = 0; current && typeof current.$ref === 'string'; hops++) {
    if (hops > 32 || !current.$ref.startsWith('#/')) throw new Error(`Unresolvable $ref ${current.$ref}`);
    current = current.$ref
      .slice(2)
      .split('/')
      .map((part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<JsonSchema | undefined>((node, key) => node?.[key], spec);
  }
  return current;
}

export class MissingPermissionDeclarationError extends Error {
  override name = 'MissingPermissionDeclarationError';
}

/** Lists the operations of the contract. Fails closed: a secured operation must declare its permission. */
export function indexOperations(spec: OpenApiDocument): OperationInfo[] {
  const operations: OperationInfo[] = [];
  for (const [path, rawItem] of Object.entries(spec.paths)) {
    const item = deref(spec, rawItem) ?? {};
    for (const method of HTTP_METHODS) {
      const op = item[method] as JsonSchema | undefined;
      if (!op) continue;
      const requirements: JsonSchema[] = op.security ?? spec.security ?? [];
      const security = requirements.flatMap((req) => Object.keys(req)) as SecurityScheme[];
      const declared = op['x-required-permission'];
      if (security.length > 0 && declared === undefined) {
        throw new MissingPermissionDeclarationError(
          `${method.toUpperCase()} ${path} (${op.operationId}) has security but no x-required-permission; ` +
            'declare a permission, or "authenticated" for any signed-in caller',
        );
      }
      const responseSchemas = new Map<number, JsonSchema>();
      for (const [status, rawResponse] of Object.entries<JsonSchema>(op.responses ?? {})) {
        const response = deref(spec, rawResponse);
        const content = response?.content as JsonSchema | undefined;
        const schema = jsonSchemaOf(content);
        if (schema) responseSchemas.set(Number(status), schema);
      }
      const parameterNames = (where: 'query' | 'header') =>
        new Set(
          [...((item.parameters as JsonSchema[] | undefined) ?? []), ...((op.parameters as JsonSchema[] | undefined) ?? [])]
            .map((parameter) => deref(spec, parameter))
            .filter((parameter) => parameter?.in === where)
            .map((parameter) => String(parameter!.name)),
        );
      operations.push({
        operationId: op.operationId,
        method,
        path,
        expressPath: path.replace(/\{([^}]+)\}/g, ':$1'),
        security,
        requiredPermission: declared === undefined || declared === 'authenticated' ? null : String(declared),
        queryParameters: parameterNames('query'),
        headerParameters: new Set([...parameterNames('header')].map((name) => name.toLowerCase())),
        requestBodySchema: jsonSchemaOf(deref(spec, op.requestBody)?.content),
        responseSchemas,
        raw: op,
      });
    }
  }
  return operations;
}

/** The one conversion of an OpenAPI path template to a regular expression (a trailing slash allowed); each `{name}` is a group. */
export function pathPattern(template: string): RegExp {
  return new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '([^/]+)')}/?$`);
}

/** Where a request lands in the contract: the path template it addresses, and the operation of its method. */
export interface RouteMatch {
  /** The path template the path matched (the operation's when there is one), whatever the method; undefined for a path outside the contract. */
  pathTemplate: string | undefined;
  operation: OperationInfo | undefined;
  /** The operation's path parameters, decoded, by name; undefined when one is not valid percent-encoding. */
  pathParams: Record<string, string> | undefined;
}

interface TemplateEntry {
  template: string;
  pattern: RegExp;
  names: string[];
  methods: Map<string, OperationInfo>;
}

/** Matches a method and path against the contract's operations, one test per path template. */
export function routeMatcher(operations: OperationInfo[]) {
  const byPath = new Map<string, TemplateEntry>();
  for (const op of operations) {
    const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    const entry = byPath.get(op.path) ?? { template: op.path, pattern: pathPattern(op.path), names, methods: new Map<string, OperationInfo>() };
    entry.methods.set(op.method.toUpperCase(), op);
    byPath.set(op.path, entry);
  }
  // Each path is tried against the templates of its first segment only (`/meetings/...` against
  // the two `/meetings` ones, not the contract's seventy in turn), in the contract's order; a
  // template starting with a parameter would be tried for every path, in its place.
  const anySegment: TemplateEntry[] = [];
  const bySegment = new Map<string, TemplateEntry[]>();
  for (const entry of byPath.values()) {
    const segment = firstSegment(entry.template);
    if (segment.startsWith('{')) {
      anySegment.push(entry);
      for (const list of bySegment.values()) list.push(entry);
    } else {
      if (!bySegment.has(segment)) bySegment.set(segment, [...anySegment]);
      bySegment.get(segment)!.push(entry);
    }
  }
  return (method: string, path: string): RouteMatch => {
    let pathTemplate: string | undefined;
    // Several templates may match one path (`/sessions/current`, `/sessions/{id}`): the first with the method wins.
    for (const entry of bySegment.get(firstSegment(path)) ?? anySegment) {
      const found = entry.pattern.exec(path);
      if (!found) continue;
      pathTemplate ??= entry.template;
      const operation = entry.methods.get(method);
      if (!operation) continue;
      return { pathTemplate: entry.template, operation, pathParams: decodeParams(entry.names, found) };
    }
    return { pathTemplate, operation: undefined, pathParams: {} };
  };
}

/** `meetings` of `/meetings/1`, `/meetings/` and `/meetings`. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return end < 0 ? path.slice(1) : path.slice(1, end);
}

function decodeParams(names: string[], found: RegExpExecArray): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  try {
    names.forEach((name, i) => (params[name] = decodeURIComponent(found[i + 1]!)));
  } catch {
    return undefined;
  }
  return params;
}

/** Finds the operation a method and path address (tests and tools; the service matches once per request). */
export function operationMatcher(operations: OperationInfo[]) {
  const match = routeMatcher(operations);
  return (method: string, path: string): OperationInfo | undefined => match(method, path).operation;
}
