// Checks a response against the contract from the client's side: the documented status, content
// type and body schema of the operation it answers (the Problem schema for anything else).
import { Ajv2020 } from 'ajv/dist/2020.js';
import { addContractFormats } from '../../src/contract/formats.js';
import { expect } from 'vitest';
import type { Response } from 'supertest';
import { indexOperations, operationMatcher, deref, type JsonSchema, type OperationInfo } from '../../src/contract/spec.js';
import { spec } from './context.js';

const ajv = new Ajv2020({ strict: false, allErrors: true });
addContractFormats(ajv);
ajv.addSchema(spec as JsonSchema, 'contract');
const problemValidator = ajv.compile({ $ref: 'contract#/components/schemas/Problem' });
/** SCIM's paths answer RFC 7644 errors (src/http/scim-errors.ts), in SCIM's media type or JSON. */
const scimErrorValidator = ajv.compile({ $ref: 'contract#/components/schemas/ScimError' });
const isScim = (path: string) => path.startsWith('/scim/');
const operations = indexOperations(spec);
const match = operationMatcher(operations);
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

function validatorFor(pointer: string) {
  let v = validators.get(pointer);
  if (!v) {
    v = ajv.compile({ $ref: `contract#${pointer}` });
    validators.set(pointer, v);
  }
  return v;
}

/** Statuses the HTTP server answers on the raw socket, before any path is read (src/http/server.ts). */
export const ANSWERED_BEFORE_ROUTING = new Set([408, 431]);

/** Asserts that `res` (to `method path`) is a documented answer with a body matching its schema. */
export function expectContractResponse(res: Response, method: string, path: string): void {
  const op = match(method.toUpperCase(), path.split('?')[0] ?? path);
  const contentType = String(res.headers['content-type'] ?? '');
  if (res.status >= 400) {
    // What the HTTP parser refuses (headers too large, a request too slow) is answered before any
    // path is read: a problem document, on SCIM's paths too (src/http/server.ts).
    const scim = isScim(path) && !ANSWERED_BEFORE_ROUTING.has(res.status);
    expect(contentType, `${method} ${path} ${res.status} content type`).toMatch(scim ? /^application\/(scim\+)?json/ : /^application\/problem\+json/);
    const validator = scim ? scimErrorValidator : problemValidator;
    const valid = validator(JSON.parse(res.text));
    expect(validator.errors ?? [], `${method} ${path} ${res.status} problem body`).toEqual([]);
    expect(valid).toBe(true);
    if (op) {
      const documented = Object.keys(op.raw.responses ?? {});
      // Statuses any operation may meet regardless of its list: a too large body, a wrong method,
      // headers too large or a request too slow (answered by the HTTP server before routing).
      const universal = ['405', '413', '415', '406', '408', '431'];
      expect([...documented, ...universal], `${method} ${path}: status ${res.status} is documented`).toContain(String(res.status));
    }
    return;
  }
  expect(op, `${method} ${path} is an operation of the contract`).toBeDefined();
  if (!op) return;
  const response = deref(spec, op.raw.responses?.[String(res.status)]);
  expect(response, `${op.operationId}: status ${res.status} is documented`).toBeDefined();
  if (!response?.content) return;
  expect(contentType).toMatch(isScim(path) ? /^application\/(scim\+)?json/ : /^application\/json/);
  // Point Ajv at the schema inside the contract, so its local $refs resolve.
  const raw = op.raw.responses?.[String(res.status)] as JsonSchema;
  const responsePointer =
    typeof raw.$ref === 'string'
      ? raw.$ref.slice(1)
      : `/paths/${op.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${op.method}/responses/${res.status}`;
  const validate = validatorFor(`${responsePointer}/content/application~1json/schema`);
  const valid = validate(res.body);
  expect(validate.errors ?? [], `${op.operationId} ${res.status} body`).toEqual([]);
  expect(valid).toBe(true);
}

/**
 * The contract's example of every required query parameter of `op` (GET /meetings' range), as a
 * query string starting with `?`, or '' when it has none: what a test calling every operation adds
 * to a path for the request to reach the operation's later steps.
 */
export function requiredQuery(op: OperationInfo): string {
  const parameters = [...(op.raw.parameters ?? []), ...(deref(spec, spec.paths[op.path])?.parameters ?? [])].map((p: JsonSchema) => deref(spec, p)!);
  const required = parameters.filter((p) => p.in === 'query' && p.required);
  return required.length === 0 ? '' : `?${required.map((p) => `${p.name}=${encodeURIComponent(String(p.example))}`).join('&')}`;
}
