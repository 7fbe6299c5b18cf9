// Applies x-api-inflection at the edge: request bodies become snake_case before validation, and
// every JSON response (after response validation, which sees the canonical body) takes the style.
// Bodies are read strictly under every style (see src/contract/inflection.ts), and a member name given twice
// in the JSON text itself is refused too: JSON.parse would silently keep the last one.
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import * as jsonc from 'jsonc-parser';
import { INFLECTION_HEADER, assertNoForbiddenKeys, invalidBodyKey, type KeyInflector } from '../contract/inflection.js';
import { parseInflection } from './inflection.js';
import { inflectionOf, operationOf } from './operation.js';

/** Reads the header first, so even a body-parser error answers in the chosen style. */
export const chooseInflection: RequestHandler = (req, res, next) => {
  // Nothing before this sets Vary on an operation's answer: set it outright, and merge (res.vary
  // parses and rebuilds the field, a few µs) only when something did.
  if (res.getHeader('Vary') === undefined) res.setHeader('Vary', INFLECTION_HEADER);
  else res.vary(INFLECTION_HEADER);
  const style = parseInflection(req.headers[INFLECTION_HEADER]);
  res.locals.inflection = style;
  // The validator checks the header against the contract's enum: it sees the value as understood.
  if (req.headers[INFLECTION_HEADER] !== undefined) req.headers[INFLECTION_HEADER] = style;
  next();
};

/** The first repeated member name of a request's JSON body, as noted by the parser's hook. */
const repeatedKeys = new WeakMap<IncomingMessage, (string | number)[]>();

/**
 * The JSON body parser's `verify` hook: notes the first member name repeated within one object
 * (the path to it, as sent). It only notes: an error thrown here would reach the error handler
 * as a 403 from the body parser. A token scan, not a recursive parse: any depth is fine.
 */
export function noteRepeatedKeys(req: IncomingMessage, _res: unknown, raw: Buffer): void {
  const repeated = firstRepeatedKey(raw.toString('utf8'));
  if (repeated) repeatedKeys.set(req, repeated);
}

// The token kinds: a const enum in the package's type declarations, which this build cannot inline;
// the package exports the same values as an object.
const Token = (jsonc as unknown as { SyntaxKind: Record<'OpenBraceToken' | 'CloseBraceToken' | 'OpenBracketToken' | 'CloseBracketToken' | 'CommaToken' | 'StringLiteral' | 'EOF', number> }).SyntaxKind;

type Frame = { names: Set<string>; key: string | undefined; expectingKey: boolean } | { index: number };

export function firstRepeatedKey(text: string): (string | number)[] | undefined {
  const scanner = jsonc.createScanner(text, true);
  const frames: Frame[] = [];
  const pathTo = (depth: number) => frames.slice(0, depth).map((f) => ('index' in f ? f.index : f.key ?? ''));
  for (let token = scanner.scan(); token !== Token.EOF; token = scanner.scan()) {
    const top = frames.at(-1);
    if (token === Token.OpenBraceToken) frames.push({ names: new Set(), key: undefined, expectingKey: true });
    else if (token === Token.OpenBracketToken) frames.push({ index: 0 });
    else if (token === Token.CloseBraceToken || token === Token.CloseBracketToken) frames.pop();
    else if (token === Token.CommaToken && top) {
      if ('index' in top) top.index += 1;
      else top.expectingKey = true;
    } else if (token === Token.StringLiteral && top && 'names' in top && top.expectingKey) {
      const name = scanner.getTokenValue();
      top.key = name;
      top.expectingKey = false;
      if (top.names.has(name)) return pathTo(frames.length);
      top.names.add(name);
    }
  }
  return undefined;
}

export function inflectBodies(inflector: KeyInflector): RequestHandler {
  return (req, res, next) => {
    const style = inflectionOf(res);
    const bodySchema = operationOf(res)?.requestBodySchema;
    const repeated = repeatedKeys.get(req);
    if (repeated) throw invalidBodyKey(inflector.pathToSnake(repeated, bodySchema, style), 'is given twice', 'duplicate_key');
    if (bodySchema) req.body = inflector.toSnake(req.body, bodySchema, style);
    else assertNoForbiddenKeys(req.body, []);
    if (style !== 'snake') {
      const json = res.json.bind(res);
      res.json = (body: unknown) => json(inflector.toStyle(body, operationOf(res)?.responseSchemas.get(res.statusCode), style));
    }
    next();
  };
}
