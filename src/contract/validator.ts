// express-openapi-validator, fed the bundled contract: parameters, headers, content type and
// bodies of requests (in snake_case, after inflectBodies). Responses are checked elsewhere
// (src/http/response-validation.ts), in the style the client receives them.
import * as OpenApiValidator from 'express-openapi-validator';
import { OpenApiSpecLoader } from 'express-openapi-validator/dist/framework/openapi.spec.loader.js';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types.js';
import type { OpenApiDocument } from './spec.js';

export function contractValidator(spec: OpenApiDocument) {
  return OpenApiValidator.middleware({
    // The validator mutates what it is given (it drops components.examples): hand it a copy.
    apiSpec: structuredClone(spec) as unknown as OpenAPIV3.DocumentV3_1,
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors: true },
    validateResponses: false,
    // Whether a credential was sent is checked just before (src/http/authenticate.ts,
    // requireCredentials), whether it is good by our authentication, with one database round trip.
    validateSecurity: false,
    validateFormats: true,
    ignoreUndocumented: false,
    $refParser: { mode: 'dereference' },
  });
}

/** The validator reports a broken contract only on the first request; check it at start-up instead. */
export async function assertContractLoads(spec: OpenApiDocument): Promise<void> {
  await new OpenApiSpecLoader({
    apiDoc: structuredClone(spec) as unknown as OpenAPIV3.DocumentV3_1,
    validateApiSpec: true,
    $refParser: { mode: 'dereference' },
  }).load();
}
