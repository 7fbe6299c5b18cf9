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
import type { RequestHandler } from 'express';
import { OpenApiValidator } from 'express-openapi-validator/dist/openapi.validator.js';
import { OpenApiSpecLoader } from 'express-openapi-validator/dist/framework/openapi.spec.loader.js';
import { RequestValidator } from 'express-openapi-validator/dist/middlewares/openapi.request.validator.js';
import { SchemaPreprocessor } from 'express-openapi-validator/dist/middlewares/parsers/schema.preprocessor.js';
import { BadRequest, MethodNotAllowed, type OpenAPIV3, type OpenApiRequest, type ValidateResponseOpts } from 'express-openapi-validator/dist/framework/types.js';
import { HTTP_METHODS, type OpenApiDocument } from './spec.js';

const OPTIONS = {
  validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors: true },
  validateResponses: false,
  // Whether a credential was sent is checked just before (src/http/authenticate.ts,
  // requireCredentials), whether it is good by our authentication, with one database round trip.
  validateSecurity: false,
  validateFormats: true,
  ignoreUndocumented: false,
  $refParser: { mode: 'dereference' },
} as const;

interface LoadedValidator {
  apiDoc: OpenAPIV3.DocumentV3_1;
  validate: RequestHandler;
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
  return { apiDoc: apiDoc as OpenAPIV3.DocumentV3_1, validate: (req, res, next) => requests.validate(req as unknown as OpenApiRequest, res, next) };
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

export function contractValidator(spec: OpenApiDocument): RequestHandler {
  const allow = allowedMethods(spec);
  const validating = ({ apiDoc, validate }: LoadedValidator): RequestHandler => (req, res, next) => {
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
    (req as unknown as OpenApiRequest).openapi = {
      expressRoute: op.expressPath,
      openApiRoute: op.path,
      pathParams,
      schema: apiDoc.paths![op.path]![op.method] as OpenAPIV3.OperationObject,
      serial: -1,
    } as OpenApiRequest['openapi'];
    validate(req, res, next);
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

/** `Application/JSON; charset=utf-8` -> `application/json`. */
const mediaTypeOf = (contentType: string) => contentType.split(';', 1)[0]!.trim().toLowerCase();

/**
 * The validator would report a broken contract only on the first request: load it at start-up
 * instead, so the service refuses to start. The apps built on `spec` then use this load.
 */
export async function assertContractLoads(spec: OpenApiDocument): Promise<void> {
  await loadValidator(spec);
}
