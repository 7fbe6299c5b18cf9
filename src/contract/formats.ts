// How the contract's `format` keywords are read, wherever one of its schemas is checked: in
// ajv-formats' "fast" mode, which the request validator is given (validator.ts; the library's
// default too), the response check, the command line's body check and the tests' contract check.
// A value that comes in outside the validator (a SCIM userName, an identity provider's e-mail
// claim) is held to the same reading: what a request may carry in, an answer may carry out.
import type { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { fastFormats, fullFormats } from 'ajv-formats/dist/formats.js';

/** The mode of ajv-formats that reads them. */
export const CONTRACT_FORMATS_MODE = 'fast';

/** Adds the formats to an Ajv instance that checks schemas of the contract. */
export function addContractFormats(ajv: Ajv2020): void {
  (addFormats as unknown as (a: Ajv2020, options: { mode: typeof CONTRACT_FORMATS_MODE }) => void)(ajv, { mode: CONTRACT_FORMATS_MODE });
}

/** The formats of that mode, as ajv-formats defines them: what the checks above apply. */
const contractFormats = { fast: fastFormats, full: fullFormats }[CONTRACT_FORMATS_MODE];

/** Whether `value` is an e-mail address as the contract reads `format: email`. */
export const isEmailAddress = (value: string): boolean => (contractFormats.email as RegExp).test(value);
