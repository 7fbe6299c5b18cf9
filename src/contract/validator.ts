// express-openapi-validator, fed the bundled contract: parameters, headers, content type and
// bodies of requests (in snake_case, after inflectBodies). Responses are checked elsewhere
// (src/http/response-validation.ts), in the style the client receives them.
//
// Assembled from the library's own parts rather than its `middleware()`: that one installs four
// middlewares chained on a promise each, and looks the route up again in every request by testing
// every path of the contract (reading two app settings per path). The operation is already
// matched once per request (src/http/operation.ts), so this hands the library that match and runs
// its request validator (the same class, options, schema preprocessing and Ajv instances the
// `middleware()` builds) synchronously. Its errors are the library's own (400, 405, 415 ...).
import type { Request, RequestHandler } from 'express';
import { OpenApiValidator } from 'express-openapi-validator/dist/openapi.validator.js';
import { OpenApiSpecLoader } from 'express-openapi-validator/dist/framework/openapi.spec.loader.js';
import { RequestValidator } from 'express-openapi-validator/dist/middlewares/openapi.request.validator.js';
import { SchemaPreprocessor } from 'express-openapi-validator/dist/middlewares/parsers/schema.preprocessor.js';
import { ParametersSchemaParser } from 'express-openapi-validator/dist/middlewares/parsers/schema.parse.js';
import { dereferenceParameter, normalizeParameter } from 'express-openapi-validator/dist/middlewares/parsers/util.js';
import { ajvErrorsToValidatorError, augmentAjvErrors, useAjvCache } from 'express-openapi-validator/dist/middlewares/util.js';
import {
  BadRequest,
  MethodNotAllowed,
  type AjvInstance,
  type OpenAPIV3,
  type OpenApiRequest,
  type ValidateResponseOpts,
} from 'express-openapi-validator/dist/framework/types.js';
import { HTTP_METHODS, type OpenApiDocument, type OperationInfo } from './spec.js';
import { CONTRACT_FORMATS_MODE } from './formats.js';

const OPTIONS = {
  validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors: true },
  validateResponses: false,
  // Whether a credential was sent is checked just before (src/http/authenticate.ts,
  // requireCredentials), whether it is good by our authentication, with one database round trip.
  validateSecurity: false,
  validateFormats: true,
  // The contract's one reading of `format` (src/contract/formats.ts; the library's default too).
  ajvFormats: { mode: CONTRACT_FORMATS_MODE },
  ignoreUndocumented: false,
  $refParser: { mode: 'dereference' },
} as const;

interface LoadedValidator {
  apiDoc: OpenAPIV3.DocumentV3_1;
  validate: RequestHandler;
  /** The library's Ajv instance for parameters (types coerced, defaults applied), which its checks are compiled on. */
  ajv: AjvInstance;
}

// One load per contract document: start-up checks it (assertContractLoads) and every app built on
// it (createApp, in the service and in each test) validates with that same load.
const loads = new WeakMap<OpenApiDocument, Promise<LoadedValidator>>();

function loadValidator(spec: OpenApiDocument): Promise<LoadedValidator> {
  let loading = loads.get(spec);
  if (!loading) loads.set(spec, (loading = load(spec)));
  return loading;
}

/** Loads the contract as the library's middleware() does, and returns its request validation for one matched operation. */
async function load(spec: OpenApiDocument): Promise<LoadedValidator> {
  // The validator mutates what it is given (it drops components.examples): hand it a copy.
  const apiSpec = structuredClone(spec) as unknown as OpenAPIV3.DocumentV3_1;
  const library = new OpenApiValidator({ apiSpec, ...OPTIONS });
  const { apiDoc } = await new OpenApiSpecLoader({ apiDoc: apiSpec, validateApiSpec: true, $refParser: OPTIONS.$refParser }).load();
  // As the library does: responses are not validated by it, and it passes that `false` on.
  new SchemaPreprocessor(apiDoc, library.ajvOpts.preprocessor, library.options.validateResponses as ValidateResponseOpts).preProcess();
  const requests = new RequestValidator(apiDoc, library.ajvOpts.request);
  return {
    apiDoc: apiDoc as OpenAPIV3.DocumentV3_1,
    validate: (req, res, next) => requests.validate(req as unknown as OpenApiRequest, res, next),
    ajv: (requests as unknown as { ajv: AjvInstance }).ajv,
  };
}

/** The methods each path of the contract answers, for a 405's Allow header: its operations' methods, and HEAD wherever GET is (src/http/head.ts). */
function allowedMethods(spec: OpenApiDocument): Map<string, string> {
  const methods = HTTP_METHODS as readonly string[];
  return new Map(
    Object.entries(spec.paths).map(([path, item]) => [
      path,
      Object.keys(item)
        .filter((key) => methods.includes(key))
        .flatMap((method) => (method === 'get' ? ['GET', 'HEAD'] : [method.toUpperCase()]))
        .join(', '),
    ]),
  );
}

export interface ContractValidatorOptions {
  /** Requests without a body take the fast path below where it is proven (the default); false: every request takes the library's path (the differential test's reference). */
  bodilessFastPath?: boolean;
}

export function contractValidator(spec: OpenApiDocument, { bodilessFastPath = true }: ContractValidatorOptions = {}): RequestHandler {
  const allow = allowedMethods(spec);
  const validating = (loaded: LoadedValidator): RequestHandler => {
    const { apiDoc, validate } = loaded;
    // Each operation's plan, made on its first request; null: all of its requests take the library's path.
    const plans = new Map<OperationInfo, BodilessPlan | null>();
    const commaListed = new Map<OperationInfo, string[]>();
    return (req, res, next) => {
      const route = res.locals.route;
      const op = route?.operation;
      if (!op) {
        // Not an operation: a path of the contract with another method is the library's 405; any other path goes on to 404.
        if (route?.pathTemplate) throw new MethodNotAllowed({ path: req.path, message: `${req.method} method not allowed`, headers: { Allow: allow.get(route.pathTemplate) ?? '' } });
        return next();
      }
      const pathParams = route.pathParams;
      if (!pathParams) throw new BadRequest({ path: req.path, message: 'malformed uri' });
      // The library compiles and keeps its checks per operation and request content type, the
      // type's parameters included: `application/json; x=<anything>`, or any type at all on an
      // operation that takes no body, would add an entry per request, without bound. It decides by
      // the media type alone (the body parser has read the body, refusing every charset but UTF-8):
      // it gets that, and no type where no body is taken.
      const sent = req.headers['content-type'];
      if (sent !== undefined) req.headers['content-type'] = op.requestBodySchema ? mediaTypeOf(sent) : undefined;
      let listed = commaListed.get(op);
      if (listed === undefined) commaListed.set(op, (listed = commaListedParameters(apiDoc, op)));
      const valueless = listed.length > 0 ? valuelessKey(req.originalUrl, listed) : undefined;
      if (valueless !== undefined) throw new BadRequest({ path: `/query/${valueless}`, message: `Empty value found for query parameter '${valueless}'` });
      if (bodilessFastPath) {
        let plan = plans.get(op);
        if (plan === undefined) plans.set(op, (plan = bodilessPlan(loaded, op)));
        if (plan && validateBodiless(plan, req, pathParams)) return next();
      }
      (req as unknown as OpenApiRequest).openapi = {
        expressRoute: op.expressPath,
        openApiRoute: op.path,
        pathParams,
        schema: apiDoc.paths![op.path]![op.method] as OpenAPIV3.OperationObject,
        serial: -1,
      } as OpenApiRequest['openapi'];
      validate(req, res, next);
    };
  };

  let handler: RequestHandler | undefined;
  const loading = loadValidator(spec).then((loaded) => (handler = validating(loaded)));
  // Not reported as unhandled before the first request, which then answers with the error.
  loading.catch(() => {});
  return (req, res, next) => {
    if (handler) return handler(req, res, next);
    loading.then((ready) => ready(req, res, next)).catch(next);
  };
}

// A comma-separated query parameter (`explode: false`, such as GET /tasks' `status`) written as a
// key alone, without `=` (`GET /tasks?status`): the library's check of its raw value calls
// `undefined.split(',')` and the TypeError answered 500. Refused first, on both paths, with the
// answer `?status=` gets (test/contract-validator-fast-path.test.ts: no 5xx on either path).
function commaListedParameters(apiDoc: OpenAPIV3.DocumentV3_1, op: OperationInfo): string[] {
  const schema = apiDoc.paths?.[op.path]?.[op.method] as OpenAPIV3.OperationObject | undefined;
  return (schema?.parameters ?? [])
    .map((raw) => dereferenceParameter(apiDoc, raw))
    .filter((parameter) => parameter.in === 'query' && parameter.explode === false && !parameter.allowReserved)
    .map((parameter) => parameter.name);
}

/** The first of `names` given in the query string as a key without `=`, split as the library splits it. */
function valuelessKey(url: string, names: string[]): string | undefined {
  const mark = url.indexOf('?');
  if (mark < 0) return undefined;
  return url
    .slice(mark + 1)
    .replace('?', '')
    .split('&')
    .find((pair) => !pair.includes('=') && names.includes(pair));
}

/** `Application/JSON; charset=utf-8` -> `application/json`. */
const mediaTypeOf = (contentType: string) => contentType.split(';', 1)[0]!.trim().toLowerCase();

/**
 * The validator would report a broken contract only on the first request: load it at start-up
 * instead, so the service refuses to start. The apps built on `spec` then use this load.
 */
export async function assertContractLoads(spec: OpenApiDocument): Promise<void> {
  await loadValidator(spec);
}

// The fast path for requests without a body.
//
// Why it exists: for every request the library's validator re-parses the URL (url.parse) and
// splits its query into raw pairs, walks every parameter of the operation through a new
// RequestParameterMutator (dereferencing and normalizing each one, copying the query string once
// per parameter), builds its cache key from the Content-Type, and rebuilds the set of known query
// keys: many times what the compiled Ajv check that does the validating costs, on every GET
// (docs/BENCHMARKS.md). For an operation that takes no body, every step of the library that can
// change the answer or what the handler sees is done here from a plan made once per operation:
//   1. the mutator's refusal of reserved characters in the raw query ("Parameter 'x' must be url
//      encoded"), parameter by parameter in the operation's order, a comma allowed in a form array;
//   2. the mutator's split of a form array without explode at its commas;
//   3. processQueryParam's refusal of an empty value ("Empty value found for query parameter 'x'");
//   4. req.params set to the matched path parameters, req.query made the request's own property
//      holding the parsed object (the library's "hack for express 5"), then the library's own
//      compiled check of query, headers and path parameters (same Ajv instance, schema and cache
//      key, so whichever path comes first compiles it for both; it coerces and fills defaults in
//      place), and its errors turned into the library's BadRequest as the library does.
// Everything else goes to the library's path: an operation with a body or with a parameter of a
// kind not listed in bodilessPlan, a request that carries a body, a query key the operation does
// not declare (refused earlier by src/http/unknown-query.ts anyway), and a URL that url.parse would
// read otherwise than a split at its first `?`.
// What guarantees identity: test/contract-validator-fast-path.test.ts sends generated requests,
// valid and invalid, for every bodiless operation to an app on each path, and requires the same
// status, headers and problem body, and the same req.query, req.params and req.headers in the
// handler; it also checks that the fast path is taken.

interface QueryParameterPlan {
  name: string;
  /** The mutator's check of the raw value: none (allowReserved), the whole value, or each of its comma-separated parts. */
  reserved: 'none' | 'whole' | 'parts';
  /** A `form` array without explode: the mutator splits its value at commas. */
  split: boolean;
}

interface BodilessPlan {
  /** The operation's query parameters, in the order the library walks them. */
  query: QueryParameterPlan[];
  /** Their names: a request with any other query key takes the library's path. */
  declared: ReadonlySet<string>;
  /** Position in `query` of each parameter whose raw value is checked. */
  checked: ReadonlyMap<string, number>;
  hasPathParams: boolean;
  check: ReturnType<typeof useAjvCache>;
  ajv: AjvInstance;
}

/** The mutator's reserved characters (RESERVED_CHARS in express-openapi-validator's req.parameter.mutator.js). */
const RESERVED_CHARS = /[:/?#[\]@!$&'()*+,;=]/;

/**
 * An origin-form URL that url.parse reads by its fast path (Node's url.js, simplePathPattern),
 * whose query is then everything after the first `?`: it starts with one `/`, and holds no
 * whitespace, control or non-ASCII character, no `#`, no `\` and no `@` (those send url.parse
 * another way, where it escapes characters of the query or cuts it at a `#`).
 */
export const PLAIN_URL = /^\/(?!\/)[!-"$-?A-[\]-~]*$/;

const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);

/** The plan of one operation's bodiless requests, or null when its requests take the library's path. */
function bodilessPlan({ apiDoc, ajv }: LoadedValidator, op: OperationInfo): BodilessPlan | null {
  const schema = apiDoc.paths?.[op.path]?.[op.method] as OpenAPIV3.OperationObject | undefined;
  // (The library's preprocessing leaves `requestBody: null` on an operation that takes none.)
  if (!schema || schema.requestBody != null || op.expressPath.endsWith('*')) return null;
  // The library's options for unknown query keys, per operation, and an API key sent in the query: none here.
  if ('x-eov-allow-unknown-query-parameters' in schema || 'x-allow-unknown-query-parameters' in schema) return null;
  const schemes = Object.values(apiDoc.components?.securitySchemes ?? {}) as OpenAPIV3.SecuritySchemeObject[];
  if (schemes.some((scheme) => scheme.type === 'apiKey' && scheme.in === 'query')) return null;
  // As the library builds its check: the same parser (which normalizes each parameter's style and
  // explode in place, as the library's first request would), the same schema, key and Ajv.
  const parameters = new ParametersSchemaParser(ajv as never, apiDoc).parse(op.expressPath, schema.parameters);
  const query: QueryParameterPlan[] = [];
  for (const raw of schema.parameters ?? []) {
    const parameter = dereferenceParameter(apiDoc, raw);
    const { name, schema: valueSchema } = normalizeParameter(ajv as never, parameter);
    const s = valueSchema as OpenAPIV3.SchemaObject & Record<string, unknown>;
    // Only what the mutator leaves alone or splits: no content, no object, no composition, no $ref.
    // It looks at the schema's `type` alone: none (the preprocessing moves a date-time's to
    // `x-eov-type`) is a value it leaves alone, as a scalar's.
    if (parameter.content || !s || '$ref' in s || s.allOf || s.oneOf || s.anyOf || s.not) return null;
    const scalar = s.type === undefined || SCALAR_TYPES.has(s.type as string);
    if (parameter.in === 'path' || parameter.in === 'header') {
      if (!scalar) return null;
      continue;
    }
    if (parameter.in !== 'query' || name.includes('[') || parameter.allowEmptyValue !== undefined || parameter.style !== 'form') return null;
    if (s.type === 'array' ? parameter.explode !== false : !scalar) return null;
    const reserved = parameter.allowReserved ? 'none' : parameter.explode ? 'whole' : 'parts';
    query.push({ name, reserved, split: s.type === 'array' });
  }
  const checked = new Map<string, number>();
  query.forEach(({ name, reserved }, index) => {
    if (reserved !== 'none' && !checked.has(name)) checked.set(name, index);
  });
  // The library's Validator: its schema of query, headers and path parameters, under its cache key
  // (method, Express route, and the Content-Type none is left with on a bodiless operation).
  const general = { paths: apiDoc.paths, components: apiDoc.components, required: ['query', 'headers', 'params'], properties: { ...parameters, body: {} } };
  const check = useAjvCache(ajv, general, `${op.method.toUpperCase()}-${op.expressPath}-not_provided`);
  return { query, declared: new Set(query.map((p) => p.name)), checked, hasPathParams: op.path.includes('{'), check, ajv };
}

/**
 * Validates a bodiless request as the library would, mutating it as the library would; throws
 * the library's errors. False, having changed nothing: this request takes the library's path.
 */
function validateBodiless(plan: BodilessPlan, req: Request, pathParams: Record<string, string>): boolean {
  if (req.body !== undefined) return false;
  const query = req.query as Record<string, string | string[]>;
  let firstEmpty: string | undefined;
  for (const key in query) {
    if (!plan.declared.has(key)) return false;
    if (firstEmpty === undefined && query[key] === '') firstEmpty = key;
  }
  // 1. The raw query's reserved characters: the first parameter (in the operation's order) one of
  // whose raw values, `k=v` split at `=` as the mutator does, breaks its rule.
  let refused = plan.query.length;
  const url = req.originalUrl;
  const mark = url.indexOf('?');
  if (mark >= 0 && plan.checked.size > 0) {
    if (!PLAIN_URL.test(url)) return false;
    for (const pair of url.slice(mark + 1).replace('?', '').split('&')) {
      const [key, value] = pair.split('=');
      const index = plan.checked.get(key!);
      if (index === undefined || index >= refused) continue;
      if (plan.query[index]!.reserved === 'parts') {
        if (value === undefined) return false; // refused before (valuelessKey): the library would throw
        if (value.split(',').some((part) => RESERVED_CHARS.test(part))) refused = index;
      } else if (value !== undefined && RESERVED_CHARS.test(value)) refused = index;
    }
  }
  // As the library: req.query becomes the request's own property (Express 5 parses it again at every read otherwise).
  Object.defineProperty(req, 'query', { writable: true, value: query });
  // 2. The form arrays before the refused parameter, split as the mutator does before it throws.
  for (let i = 0; i < refused; i++) {
    const { name, split } = plan.query[i]!;
    const value = query[name];
    if (split && value && !Array.isArray(value)) query[name] = value.split(',');
  }
  if (refused < plan.query.length) {
    const { name } = plan.query[refused]!;
    throw new BadRequest({ path: `/query/${name}`, message: `Parameter '${name}' must be url encoded. Its value may not contain reserved characters.` });
  }
  // 3. An empty value (the mutator turns none into one, nor any into one).
  if (firstEmpty !== undefined) throw new BadRequest({ path: `/query/${firstEmpty}`, message: `Empty value found for query parameter '${firstEmpty}'` });
  // 4. The compiled check, on the library's data: it coerces and fills defaults in place.
  if (plan.hasPathParams) req.params = pathParams;
  const cookies = req.cookies ? { ...req.cookies, ...req.signedCookies } : undefined;
  const data = { query: query ?? {}, headers: req.headers, params: req.params, cookies, body: req.body };
  if (plan.check(data)) return true;
  const errors = augmentAjvErrors([...((plan.check.errors ?? []) as Parameters<typeof augmentAjvErrors>[0] & object)]);
  const error = new BadRequest({ path: req.path, message: plan.ajv.errorsText(errors as never, { dataVar: 'request' }) });
  error.errors = ajvErrorsToValidatorError(400, errors).errors;
  throw error;
}
