// Response validation: the body that leaves, in the key style the client chose, checked against
// that style's contract (src/contract/styled.ts), so what is checked is exactly what a client,
// Prism's proxy or a generated type sees. On in tests and development (VALIDATE_RESPONSES), off in
// production: a response that breaks the contract is our bug, to be found before it ships.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { addContractFormats } from './formats.js';
import { INFLECTIONS, type Inflection } from './inflection.js';
import type { JsonSchema, OperationInfo } from './spec.js';
import type { StyledContracts } from './styled.js';

export class ResponseContractError extends Error {
  override name = 'ResponseContractError';
}

export interface ResponseChecker {
  /** Throws ResponseContractError when a JSON success body is not what the operation documents for `status`. */
  checkBody(op: OperationInfo, status: number, body: unknown, style: Inflection): void;
  /** What is wrong with a problem document, or undefined when it is a valid Problem of the style. */
  problemViolation(body: unknown, style: Inflection): string | undefined;
  /** What is wrong with a SCIM error body (the same in every style), or undefined. */
  scimErrorViolation(body: unknown): string | undefined;
}

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** One checker per set of contracts: tests build many apps on the same documents, each compiled once. */
const checkers = new WeakMap<StyledContracts, ResponseChecker>();

export function responseChecker(contracts: StyledContracts): ResponseChecker {
  let checker = checkers.get(contracts);
  if (!checker) {
    checker = buildChecker(contracts);
    checkers.set(contracts, checker);
  }
  return checker;
}

function buildChecker(contracts: StyledContracts): ResponseChecker {
  // The contracts are plain JSON documents: Ajv resolves their local $refs once added by name.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addContractFormats(ajv);
  for (const style of INFLECTIONS) ajv.addSchema(contracts[style] as JsonSchema, style);
  const compiled = new Map<string, ValidateFunction>();
  const validator = (style: Inflection, pointer: string) => {
    const key = `${style}#${pointer}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile({ $ref: key });
      compiled.set(key, validate);
    }
    return validate;
  };
  const describe = (validate: ValidateFunction) =>
    ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' });

  return {
    checkBody(op, status, body, style) {
      const contract = contracts[style];
      const where = `${op.operationId} ${status} (${style})`;
      let pointer = `/paths/${escapePointer(op.path)}/${op.method}/responses/${status}`;
      let response = contract.paths[op.path]?.[op.method]?.responses?.[String(status)] as JsonSchema | undefined;
      if (typeof response?.$ref === 'string') {
        pointer = response.$ref.slice(1);
        response = pointer.split('/').slice(1).reduce<JsonSchema | undefined>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], contract);
      }
      if (!response) throw new ResponseContractError(`${where}: the contract documents no such status`);
      if (!response.content?.['application/json']?.schema) throw new ResponseContractError(`${where}: the contract documents no JSON body`);
      const validate = validator(style, `${pointer}/content/application~1json/schema`);
      if (!validate(body)) throw new ResponseContractError(`${where}: the response breaks the contract: ${describe(validate)}`);
    },
    problemViolation(body, style) {
      const validate = validator(style, '/components/schemas/Problem');
      return validate(body) ? undefined : describe(validate);
    },
    scimErrorViolation(body) {
      const validate = validator('snake', '/components/schemas/ScimError');
      return validate(body) ? undefined : describe(validate);
    },
  };
}
