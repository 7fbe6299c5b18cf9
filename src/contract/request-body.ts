// What the API's contract validator says of a request body, for a client inside this process (the
// command line): the same schema (the bundled contract's), the same validator (Ajv), so the same
// locations and words (`request/body/rate_limit/requests must be >= 1`). Where a field may be a
// value or null (`oneOf`), the API also lists the two failures of the choice itself ("must be
// null", "must match exactly one schema in oneOf"); they are left out when a more precise error
// says what is wrong.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { addContractFormats } from './formats.js';
import { readContract, type JsonSchema } from './spec.js';
import type { FieldError } from '../errors.js';

let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

function validatorOf(schemaName: string): ValidateFunction {
  let validate = compiled.get(schemaName);
  if (!validate) {
    if (!ajv) {
      ajv = new Ajv2020({ strict: false, allErrors: true });
      addContractFormats(ajv);
      ajv.addSchema(readContract() as JsonSchema, 'contract');
    }
    validate = ajv.compile({ $ref: `contract#/components/schemas/${schemaName}` });
    compiled.set(schemaName, validate);
  }
  return validate;
}

/** The errors the API would answer for `body` sent as the contract's schema `schemaName`; none when it is valid. */
export function requestBodyErrors(schemaName: string, body: unknown): FieldError[] {
  const validate = validatorOf(schemaName);
  if (validate(body)) return [];
  const errors = validate.errors ?? [];
  const ofChoice = (e: ErrorObject) => e.keyword === 'oneOf' || (e.keyword === 'type' && e.params.type === 'null');
  const explained = (e: ErrorObject) => errors.some((o) => !ofChoice(o) && (o.instancePath === e.instancePath || o.instancePath.startsWith(`${e.instancePath}/`)));
  return errors
    .filter((e) => !(ofChoice(e) && explained(e)))
    .map((e) => ({ location: `request/body${e.instancePath}`, message: e.message ?? 'is invalid', error_code: e.keyword }));
}
