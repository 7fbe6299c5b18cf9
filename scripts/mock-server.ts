// `make mock`: one mock of the contract for frontend and partner teams, answering each request in
// the key style its x-api-inflection header asks for, as the service does (the default style when
// the header is absent; an unknown value is the service's own 400 invalid_inflection).
// Usage: node --import tsx scripts/mock-server.ts [DEFAULT_STYLE] [PORT]   (scripts/mock.sh checks them)
//
// Prism (@stoplight/prism-http-server, the server `prism mock` runs) serves each style's bundle,
// generated/openapi[.style].json, in this process on a loopback port of its own; a plain node:http
// front reads the header and forwards the request to that style's Prism. Two of Prism's components
// are wrapped so that a request the contract rejects gets the status and `code` the service gives:
//
// - Prism answers an invalid request with the operation's 422 when one is declared, else its 400
//   (prism-http's mocker, getExpectedCodesForViolations: [422, 400]; the order is fixed, no option
//   changes it). In this contract a 422 is only ever `idempotency_key_reused`, a key reused for
//   another request: state, never the shape of a request. The service answers a request its
//   validator rejects with 400 `validation_failed`, and a request without any credential with 401
//   `unauthenticated`. So for an invalid request the mocker sees the operation without its 422, and
//   with the documented example of the service's code first (Prism answers the first example). A
//   valid request still gets the 422 example on `Prefer: code=422`.
// - Prism ignores query parameters the operation does not declare; the service refuses them (400
//   validation_failed, src/http/unknown-query.ts), before it looks at credentials. The wrapped input
//   validator reports them (Prism's own `__code`-style switches excepted).
//
// test/mock-differential.test.ts sends every operation's valid and invalid requests to this mock and
// to the service, and fails the day they answer differently.
import { createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { createServer as createPrismServer } from '@stoplight/prism-http-server';
import { getHttpOperationsFromSpec, type IHttpConfig, type PrismHttpComponents } from '@stoplight/prism-http';
import { createLogger } from '@stoplight/prism-core';
import type { IPrismDiagnostic } from '@stoplight/prism-core';
// Prism's own mocker and input validator, to wrap (prism-http exports them only from dist/; the
// version is pinned in package.json).
import prismMocker from '@stoplight/prism-http/dist/mocker/index.js';
import { validateInput as prismValidateInput } from '@stoplight/prism-http/dist/validator/index.js';
import { DiagnosticSeverity, type IHttpOperation, type IHttpOperationResponse } from '@stoplight/types';
import { INFLECTIONS, INFLECTION_HEADER, styleKey, type Inflection } from '../src/contract/inflection.js';
import { parseInflection } from '../src/http/inflection.js';
import { ProblemError } from '../src/http/problem.js';
import { isScimPath, scimErrorOf, scimMediaType } from '../src/http/scim-errors.js';
import { bundlePath } from '../src/paths.js';

/** The codes the service answers a request with before any state is read (src/errors.ts, src/http/authenticate.ts). */
const CODE_FOR_INVALID_REQUEST = 'validation_failed';
const CODE_FOR_NO_CREDENTIAL = 'unauthenticated';
/** Prism's own diagnostic code for a missing credential (its security validator). */
const PRISM_SECURITY_VIOLATION = 401;
const UNKNOWN_QUERY_PARAMETER = 'unknown_query_parameter';

type Mock = PrismHttpComponents['mock'];
type ValidateInput = PrismHttpComponents['validateInput'];
const mock = ((prismMocker as unknown as { default?: Mock }).default ?? prismMocker) as Mock;

/** The operation as the mocker should see it for a request the contract rejects (see the top of this file). */
function forInvalidRequest(resource: IHttpOperation, validations: IPrismDiagnostic[], style: Inflection): IHttpOperation {
  const noCredential = validations.some((v) => v.code === PRISM_SECURITY_VIOLATION);
  const wanted = noCredential ? CODE_FOR_NO_CREDENTIAL : CODE_FOR_INVALID_REQUEST;
  const codeKey = styleKey('code', style);
  const hasWantedCode = (example: object) => 'value' in example && (example.value as Record<string, unknown> | undefined)?.[codeKey] === wanted;
  const withWantedFirst = (response: IHttpOperationResponse): IHttpOperationResponse => ({
    ...response,
    contents: response.contents?.map((content) => ({
      ...content,
      examples: content.examples && [...content.examples.filter((e) => hasWantedCode(e)), ...content.examples.filter((e) => !hasWantedCode(e))],
    })),
  });
  return { ...resource, responses: resource.responses.filter((response) => response.code !== '422').map(withWantedFirst) as IHttpOperation['responses'] };
}

function components(style: Inflection, logger: PrismHttpComponents['logger']): Partial<PrismHttpComponents> & Pick<PrismHttpComponents, 'logger'> {
  const wrappedMock: Mock = (options) => {
    let validations = options.input.validations;
    const invalid = validations.some((v) => v.severity === DiagnosticSeverity.Error);
    if (!invalid) return mock(options);
    // The service refuses unknown query parameters before it asks for credentials.
    if (validations.some((v) => v.code === UNKNOWN_QUERY_PARAMETER)) validations = validations.filter((v) => v.code !== PRISM_SECURITY_VIOLATION);
    return mock({ ...options, resource: forInvalidRequest(options.resource, validations, style), input: { ...options.input, validations } });
  };
  const validateInput: ValidateInput = (options) => {
    const result = prismValidateInput(options);
    const declared = new Set((options.resource.request?.query ?? []).map((parameter) => parameter.name));
    const unknown: IPrismDiagnostic[] = Object.keys(options.element.url.query ?? {})
      .filter((name) => !declared.has(name) && !name.startsWith('__'))
      .map((name) => ({ path: ['query', name], code: UNKNOWN_QUERY_PARAMETER, message: `${name} is not a query parameter of this operation`, severity: DiagnosticSeverity.Error }));
    if (unknown.length === 0) return result;
    const earlier = result._tag === 'Left' ? result.left : [];
    return { _tag: 'Left', left: [...earlier, ...unknown] as [IPrismDiagnostic, ...IPrismDiagnostic[]] };
  };
  return { logger, mock: wrappedMock, validateInput };
}

/** Prism's JSON log lines, one readable line each, named by style. */
function logStream(style: Inflection): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        try {
          const record = JSON.parse(line) as { name?: string; msg?: string; input?: { method?: string; url?: { path?: string } } };
          const request = record.input ? ` ${record.input.method?.toUpperCase()} ${record.input.url?.path}` : '';
          process.stdout.write(`[${style}] ${record.name ?? ''}${request} ${record.msg ?? ''}\n`);
        } catch {
          process.stdout.write(`[${style}] ${line}\n`);
        }
      }
      done();
    },
  });
}

async function startStyle(style: Inflection): Promise<string> {
  const document = bundlePath(style);
  const operations = await getHttpOperationsFromSpec(JSON.parse(readFileSync(document, 'utf8')));
  const logger = createLogger('MOCK', { level: 'info' }, logStream(style));
  // The options `prism mock` runs with (its CLI's defaults: static examples, CORS for browsers).
  const config: IHttpConfig = { isProxy: false, validateRequest: true, validateResponse: true, checkSecurity: true, errors: false, upstreamProxy: undefined, mock: { dynamic: false, ignoreExamples: false } };
  const server = createPrismServer(operations, { cors: true, config, components: components(style, logger) });
  return server.listen(0, '127.0.0.1');
}

function answerProblem(req: IncomingMessage, res: ServerResponse, problem: ProblemError): void {
  const requestId = randomUUID();
  // SCIM's paths answer SCIM errors, as the service does (src/http/scim-errors.ts).
  const scim = isScimPath(req.url ?? '');
  const type = scim ? scimMediaType(req.headers.accept) : 'application/problem+json';
  res.writeHead(problem.status, { 'content-type': type, 'cache-control': 'no-store', 'x-request-id': requestId, vary: INFLECTION_HEADER });
  res.end(JSON.stringify(scim ? scimErrorOf(problem.toProblem(requestId)) : problem.toProblem(requestId)));
}

/** What Prism found wrong with a request (its `sl-violations` header): where, and what. */
interface Violation {
  location?: (string | number)[];
  message?: string;
}

/** Prism's "Request query parameter limit must be integer" as the service says it after the location: "must be integer". */
const PRISM_PREFIX = /^Request (?:(?:query|path|header|cookie) parameter \S+|body(?: property \S+)?) /;

/**
 * Prism answers an invalid request with the 400's example, whose detail tells of another request
 * (for example "request/body/session must have required property 'password'" for `?limit=abc`). The
 * status and code stay; the detail and errors become what Prism itself found, worded as the
 * service words them ("request/query/limit must be integer"), or go when it says nothing usable.
 */
function answerViolations(answer: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  answer.on('data', (chunk: Buffer) => chunks.push(chunk));
  answer.on('end', () => {
    const headers = { ...answer.headers };
    delete headers['content-length'];
    let body = Buffer.concat(chunks).toString('utf8');
    try {
      const problem = JSON.parse(body) as Record<string, unknown>;
      const raw = String(answer.headers['sl-violations']);
      const found = (raw.startsWith('[') ? (JSON.parse(raw) as Violation[]) : [])
        .filter((violation) => violation.message && violation.location && violation.location[0] === 'request')
        .map((violation) => ({ location: violation.location!.join('/'), message: violation.message!.replace(PRISM_PREFIX, '') }));
      // Its keys are one word each, so only PascalCase writes them otherwise (Type, Detail, Errors).
      const key = (name: string) => ('Type' in problem ? name[0]!.toUpperCase() + name.slice(1) : name);
      delete problem[key('errors')];
      if (found.length === 0) delete problem[key('detail')];
      else {
        problem[key('detail')] = found.map((violation) => `${violation.location} ${violation.message}`).join('; ');
        problem[key('errors')] = found.map((violation) => ({ [key('location')]: violation.location, [key('message')]: violation.message }));
      }
      body = JSON.stringify(problem);
    } catch {
      // Not the JSON expected: passed on as Prism wrote it.
    }
    res.writeHead(400, headers);
    res.end(body);
  });
}

async function main(): Promise<void> {
  const defaultStyle = (process.argv[2] ?? 'snake') as Inflection;
  const port = Number(process.argv[3] ?? 4010);
  if (!INFLECTIONS.includes(defaultStyle)) throw new Error(`STYLE must be one of ${INFLECTIONS.join(', ')} (got '${defaultStyle}')`);
  const addresses = Object.fromEntries(await Promise.all(INFLECTIONS.map(async (style) => [style, new URL(await startStyle(style))] as const))) as Record<Inflection, URL>;

  const front = createServer((req: IncomingMessage, res: ServerResponse) => {
    const header = req.headers[INFLECTION_HEADER];
    let style = defaultStyle;
    if (header !== undefined) {
      try {
        // The service's own reading of the header: any letter case, blanks around; else its 400.
        style = parseInflection(header);
      } catch (error) {
        if (error instanceof ProblemError) return answerProblem(req, res, error);
        throw error;
      }
      // Each style's contract declares the header as that one value.
      req.headers[INFLECTION_HEADER] = style;
    }
    const target = addresses[style];
    const upstream = forward({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      if (answer.statusCode === 400 && answer.headers['sl-violations'] && /json/.test(answer.headers['content-type'] ?? '')) return answerViolations(answer, res);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`The mock of the ${style} contract failed: ${error.message}`);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => front.listen(port, '127.0.0.1', resolve));
  process.stdout.write(
    `Mock listening on http://127.0.0.1:${port}: the contract's examples in the key style x-api-inflection asks for (${INFLECTIONS.join(', ')}; ${defaultStyle} without the header)\n`,
  );
  // Nothing to save: the mock keeps no state.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
