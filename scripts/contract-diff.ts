// What changed between two bundled contracts (generated/openapi.json shape: OpenAPI 3.1, local
// $refs), and which changes break a partner. A maintained diff tool would be preferable; none
// runs here without fetching a binary of its own (oasdiff's npm wrappers, @pb33f/openapi-changes)
// or phoning home (@useoptic/optic, also unmaintained), so the rules are written here, each with
// its test (test/contract-compat.test.ts).
//
// A partner's side of each message decides what "narrower" means: what they SEND (parameters,
// request bodies) may not be refused where it was accepted; what they RECEIVE (responses, webhook
// payloads) may not carry what they could not get before.
//
// Usage: node --import tsx scripts/contract-diff.ts [released] [current]
//        (default openapi/released/openapi.json and generated/openapi.json): prints the changes as
//        markdown, breaking first; exits 1 when a breaking change comes without a new major version.
//        node --import tsx scripts/contract-diff.ts --release [baseline]   (make contract-release):
//        records generated/openapi.json as the released contract, its section in
//        docs/CONTRACT-CHANGELOG.md.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

type Json = Record<string, unknown>;
export type Severity = 'breaking' | 'change';
export interface Change {
  severity: Severity;
  /** A stable name of the rule (`response-field-removed`, ...). */
  rule: string;
  /** Where: `GET /users 200 body .data[].email`, `webhook task.created`, ... */
  where: string;
  message: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
type Direction = 'request' | 'response';

function resolver(doc: Json) {
  return function resolve<T = Json>(value: unknown): T {
    let current = value as Json;
    for (let hops = 0; current && typeof current.$ref === 'string' && hops < 50; hops++) {
      const ref = current.$ref as string;
      if (!ref.startsWith('#/')) throw new Error(`only local $refs: ${ref}`);
      current = ref
        .slice(2)
        .split('/')
        .reduce<unknown>((node, part) => (node as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc) as Json;
    }
    return current as T;
  };
}

const majorOf = (version: string) => Number(/^(\d+)/.exec(version)?.[1] ?? 0);

/** The JSON types a schema admits (`integer` counted inside `number`), or undefined when it says nothing. */
function typesOf(schema: Json, resolve: (v: unknown) => Json): Set<string> | undefined {
  const out = new Set<string>();
  if (schema.const !== undefined) out.add(schema.const === null ? 'null' : typeof schema.const === 'number' ? (Number.isInteger(schema.const) ? 'integer' : 'number') : typeof schema.const);
  if (typeof schema.type === 'string') out.add(schema.type);
  if (Array.isArray(schema.type)) for (const t of schema.type) out.add(t as string);
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (!Array.isArray(schema[key])) continue;
    for (const variant of schema[key] as unknown[]) {
      const inner = typesOf(resolve(variant), resolve);
      if (!inner) return undefined;
      for (const t of inner) out.add(t);
    }
  }
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf as unknown[]) for (const t of typesOf(resolve(part), resolve) ?? []) out.add(t);
  }
  return out.size > 0 ? out : undefined;
}

const admits = (types: Set<string>, t: string) => types.has(t) || (t === 'integer' && types.has('number'));

/** Properties (and their required set) of an object schema, allOf merged. */
function objectOf(schema: Json, resolve: (v: unknown) => Json): { properties: Record<string, unknown>; required: Set<string>; closed: boolean } {
  const properties: Record<string, unknown> = { ...((schema.properties as Json) ?? {}) };
  const required = new Set<string>((schema.required as string[]) ?? []);
  let closed = schema.additionalProperties === false || schema.unevaluatedProperties === false;
  for (const part of (schema.allOf as unknown[]) ?? []) {
    const inner = objectOf(resolve(part), resolve);
    Object.assign(properties, inner.properties);
    for (const r of inner.required) required.add(r);
    closed ||= inner.closed;
  }
  return { properties, required, closed };
}

const enumOf = (schema: Json): unknown[] | undefined => (Array.isArray(schema.enum) ? schema.enum : schema.const !== undefined ? [schema.const] : undefined);

export function compareContracts(released: Json, current: Json): Change[] {
  const changes: Change[] = [];
  const was = resolver(released);
  const now = resolver(current);
  const told = new Set<string>();
  const add = (severity: Severity, rule: string, where: string, message: string) => {
    const key = JSON.stringify([severity, rule, where, message]);
    if (told.has(key)) return;
    told.add(key);
    changes.push({ severity, rule, where, message });
  };

  function compareSchema(oldRaw: unknown, newRaw: unknown, direction: Direction, where: string, seen: Set<string>): void {
    const key = `${(oldRaw as Json)?.$ref ?? ''}|${(newRaw as Json)?.$ref ?? ''}|${direction}`;
    if ((oldRaw as Json)?.$ref && (newRaw as Json)?.$ref) {
      if (seen.has(key)) return;
      seen = new Set(seen).add(key);
      // A shared schema's change is told once, under its own name, not at every use.
      if ((oldRaw as Json).$ref === (newRaw as Json).$ref) where = `schema ${((oldRaw as Json).$ref as string).split('/').pop()!}`;
    }
    const before = was(oldRaw) ?? {};
    const after = now(newRaw) ?? {};
    // Types.
    const oldTypes = typesOf(before, was);
    const newTypes = typesOf(after, now);
    if (direction === 'request' && oldTypes && newTypes) {
      const lost = [...oldTypes].filter((t) => !admits(newTypes, t));
      if (lost.length) add('breaking', 'request-type-narrowed', where, `no longer accepts ${lost.join(', ')}`);
    }
    if (direction === 'response' && newTypes && oldTypes) {
      const gained = [...newTypes].filter((t) => !admits(oldTypes, t));
      if (gained.length) add('breaking', gained.includes('null') ? 'response-field-nullable' : 'response-type-widened', where, `may now be ${gained.join(', ')}`);
    }
    // Enums.
    const oldEnum = enumOf(before);
    const newEnum = enumOf(after);
    if (oldEnum && newEnum) {
      const removed = oldEnum.filter((v) => !newEnum.some((w) => JSON.stringify(w) === JSON.stringify(v)));
      const added = newEnum.filter((v) => !oldEnum.some((w) => JSON.stringify(w) === JSON.stringify(v)));
      if (removed.length) add('breaking', 'enum-value-removed', where, `${removed.map((v) => JSON.stringify(v)).join(', ')} removed`);
      if (added.length) {
        if (direction === 'response') add('change', 'response-enum-value-added', where, `${added.map((v) => JSON.stringify(v)).join(', ')} added: handle values you do not know`);
        else add('change', 'request-enum-value-added', where, `${added.map((v) => JSON.stringify(v)).join(', ')} accepted`);
      }
    } else if (!oldEnum && newEnum && direction === 'request') add('breaking', 'request-type-narrowed', where, `now limited to ${newEnum.map((v) => JSON.stringify(v)).join(', ')}`);
    // Bounds of what is sent.
    if (direction === 'request') {
      const tighter = (name: string, smaller: boolean) => {
        const o = before[name] as number | undefined;
        const n = after[name] as number | undefined;
        if (n === undefined) return;
        if (o === undefined || (smaller ? n < o : n > o)) add('breaking', 'request-type-narrowed', where, `${name} ${o ?? 'none'} -> ${n}`);
      };
      for (const name of ['maxLength', 'maxItems', 'maximum', 'exclusiveMaximum', 'maxProperties']) tighter(name, true);
      for (const name of ['minLength', 'minItems', 'minimum', 'exclusiveMinimum', 'minProperties']) tighter(name, false);
      if (after.pattern !== undefined && after.pattern !== before.pattern) add('breaking', 'request-type-narrowed', where, `pattern ${JSON.stringify(before.pattern ?? null)} -> ${JSON.stringify(after.pattern)}`);
      if (after.format !== undefined && before.format === undefined) add('breaking', 'request-type-narrowed', where, `format ${JSON.stringify(after.format)} now required`);
    }
    // Objects.
    const oldObject = objectOf(before, was);
    const newObject = objectOf(after, now);
    for (const [name, schema] of Object.entries(oldObject.properties)) {
      const at = `${where}.${name}`;
      if (!(name in newObject.properties)) {
        if (direction === 'response') add('breaking', 'response-field-removed', at, 'removed');
        else if (newObject.closed) add('breaking', 'request-field-removed', at, 'removed: sending it is refused now');
        else add('change', 'request-field-removed', at, 'no longer read');
        continue;
      }
      if (direction === 'response' && oldObject.required.has(name) && !newObject.required.has(name)) add('breaking', 'response-field-optional', at, 'may now be absent');
      if (direction === 'request' && !oldObject.required.has(name) && newObject.required.has(name)) add('breaking', 'request-field-required', at, 'now required');
      compareSchema(schema, newObject.properties[name], direction, at, seen);
    }
    for (const name of Object.keys(newObject.properties)) {
      if (name in oldObject.properties) continue;
      const at = `${where}.${name}`;
      if (direction === 'request' && newObject.required.has(name)) add('breaking', 'request-field-required', at, 'new and required');
      else add('change', direction === 'request' ? 'request-field-added' : 'response-field-added', at, 'added');
    }
    // Arrays.
    if (before.items !== undefined && after.items !== undefined) compareSchema(before.items, after.items, direction, `${where}[]`, seen);
    // Variants matched by their $ref (or position).
    for (const keyword of ['oneOf', 'anyOf'] as const) {
      const o = (before[keyword] as unknown[]) ?? [];
      const n = (after[keyword] as unknown[]) ?? [];
      if (!o.length || !n.length) continue;
      const name = (v: unknown, i: number) => ((v as Json).$ref as string | undefined) ?? `#${i}`;
      const newByName = new Map(n.map((v, i) => [name(v, i), v]));
      o.forEach((variant, i) => {
        const match = newByName.get(name(variant, i));
        if (match !== undefined) compareSchema(variant, match, direction, `${where}(${name(variant, i).split('/').pop()})`, seen);
        else if (direction === 'request' && (was(variant) as Json).type !== 'null') add('breaking', 'request-type-narrowed', where, `${name(variant, i).split('/').pop()} no longer accepted`);
      });
    }
  }

  function compareContent(o: Json | undefined, n: Json | undefined, direction: Direction, where: string) {
    for (const [media, entry] of Object.entries(o ?? {})) {
      const next = (n ?? {})[media] as Json | undefined;
      if (!next) {
        add('breaking', direction === 'request' ? 'request-media-type-removed' : 'response-media-type-removed', where, `${media} no longer ${direction === 'request' ? 'accepted' : 'answered'}`);
        continue;
      }
      compareSchema((entry as Json).schema, next.schema, direction, `${where} body`, new Set());
    }
  }

  function parameters(operation: Json, pathItem: Json, resolve: (v: unknown) => Json) {
    const out = new Map<string, Json>();
    for (const raw of [...((pathItem.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])]) {
      const p = resolve(raw);
      out.set(`${p.in as string} ${(p.in === 'header' ? (p.name as string).toLowerCase() : p.name) as string}`, p);
    }
    return out;
  }

  function compareOperation(where: string, oldOp: Json, newOp: Json, oldItem: Json, newItem: Json, isWebhook: boolean) {
    if (!isWebhook && oldOp.operationId !== newOp.operationId) add('breaking', 'operation-id-renamed', where, `operationId ${String(oldOp.operationId)} -> ${String(newOp.operationId)} (generated clients name it)`);
    // What the partner sends (for a webhook, the service sends: its payload is what the partner receives).
    const sent: Direction = isWebhook ? 'response' : 'request';
    const oldParams = parameters(oldOp, oldItem, was);
    const newParams = parameters(newOp, newItem, now);
    for (const [name, p] of oldParams) {
      const q = newParams.get(name);
      if (!q) {
        if (!isWebhook && p.in !== 'header') add('breaking', 'parameter-removed', `${where} ${name}`, 'removed: sending it is refused now');
        else add('change', 'parameter-removed', `${where} ${name}`, 'removed');
        continue;
      }
      if (!isWebhook && !p.required && q.required) add('breaking', 'parameter-required', `${where} ${name}`, 'now required');
      compareSchema(p.schema, q.schema, sent, `${where} ${name}`, new Set());
    }
    for (const [name, q] of newParams) {
      if (oldParams.has(name)) continue;
      if (q.required && !isWebhook) add('breaking', 'parameter-required', `${where} ${name}`, 'new and required');
      else add('change', 'parameter-added', `${where} ${name}`, 'added');
    }
    const oldBody = was(oldOp.requestBody) as Json | undefined;
    const newBody = now(newOp.requestBody) as Json | undefined;
    if (!isWebhook && newBody?.required && !oldBody?.required) add('breaking', 'request-body-required', where, 'a body is now required');
    if (oldBody && newBody) compareContent(oldBody.content as Json, newBody.content as Json, sent, where);
    // What the partner receives.
    const oldResponses = (oldOp.responses as Json) ?? {};
    const newResponses = (newOp.responses as Json) ?? {};
    for (const [status, raw] of Object.entries(oldResponses)) {
      const next = newResponses[status];
      if (!next) {
        if (/^2/.test(status)) add('breaking', 'success-response-removed', `${where} ${status}`, 'no longer answered');
        else add('change', 'response-removed', `${where} ${status}`, 'no longer documented');
        continue;
      }
      const before = was<Json>(raw);
      const after = now<Json>(next);
      if (/^2/.test(status)) {
        const names = (r: Json) => Object.keys((r.headers as Json) ?? {}).map((h) => h.toLowerCase());
        for (const header of names(before)) if (!names(after).includes(header)) add('breaking', 'response-header-removed', `${where} ${status} ${header}`, 'no longer sent');
      }
      compareContent(before.content as Json, after.content as Json, 'response', `${where} ${status}`);
    }
    for (const status of Object.keys(newResponses)) if (!(status in oldResponses)) add(/^2/.test(status) ? 'breaking' : 'change', 'response-added', `${where} ${status}`, /^2/.test(status) ? 'a new success status' : 'a new documented answer');
    if (isWebhook) return;
    // Who may call.
    const schemes = (op: Json, doc: Json) => ((op.security ?? doc.security) as Json[] | undefined)?.map((r) => Object.keys(r).sort().join('+')) ?? [];
    const oldSchemes = schemes(oldOp, released);
    const newSchemes = schemes(newOp, current);
    for (const s of oldSchemes) if (!newSchemes.includes(s)) add('breaking', 'security-scheme-removed', where, `${s || 'no credential'} no longer accepted`);
    if (oldOp['x-required-permission'] !== newOp['x-required-permission']) add('breaking', 'permission-changed', where, `x-required-permission ${JSON.stringify(oldOp['x-required-permission'])} -> ${JSON.stringify(newOp['x-required-permission'])}`);
    if (oldOp['x-step-up'] !== newOp['x-step-up'] && newOp['x-step-up'] !== undefined) add('breaking', 'step-up-required', where, `x-step-up ${JSON.stringify(oldOp['x-step-up'] ?? null)} -> ${JSON.stringify(newOp['x-step-up'])}`);
  }

  for (const [section, isWebhook] of [['paths', false], ['webhooks', true]] as const) {
    const oldItems = (released[section] as Json) ?? {};
    const newItems = (current[section] as Json) ?? {};
    for (const [path, rawItem] of Object.entries(oldItems)) {
      const oldItem = was<Json>(rawItem);
      const newItem = newItems[path] === undefined ? undefined : now<Json>(newItems[path]);
      for (const method of METHODS) {
        const oldOp = oldItem[method] as Json | undefined;
        if (!oldOp) continue;
        const where = isWebhook ? `webhook ${path}` : `${method.toUpperCase()} ${path}`;
        const newOp = newItem?.[method] as Json | undefined;
        if (!newOp) {
          add('breaking', isWebhook ? 'event-removed' : 'operation-removed', where, 'removed');
          continue;
        }
        compareOperation(where, oldOp, newOp, oldItem, newItem!, isWebhook);
      }
    }
    for (const [path, rawItem] of Object.entries(newItems)) {
      const newItem = now<Json>(rawItem);
      const oldItem = oldItems[path] === undefined ? undefined : was<Json>(oldItems[path]);
      for (const method of METHODS) if (newItem[method] && !oldItem?.[method]) add('change', isWebhook ? 'event-added' : 'operation-added', isWebhook ? `webhook ${path}` : `${method.toUpperCase()} ${path}`, 'added');
    }
  }
  return changes;
}

export interface Verdict {
  from: string;
  to: string;
  breaking: Change[];
  other: Change[];
  /** Breaking changes without a new major version. */
  refused: boolean;
}

export function judge(released: Json, current: Json): Verdict {
  const changes = compareContracts(released, current);
  const from = (released.info as Json).version as string;
  const to = (current.info as Json).version as string;
  const breaking = changes.filter((c) => c.severity === 'breaking');
  return { from, to, breaking, other: changes.filter((c) => c.severity !== 'breaking'), refused: breaking.length > 0 && majorOf(to) <= majorOf(from) };
}

/** The changes as a changelog section (markdown). */
export function changelogSection(verdict: Verdict, date: string): string {
  const line = (c: Change) => `- \`${c.where}\`: ${c.message} (${c.rule})`;
  const out = [`## ${verdict.to} (${date}, from ${verdict.from})`, ''];
  if (verdict.breaking.length) out.push('### Breaking', '', ...verdict.breaking.map(line), '');
  if (verdict.other.length) out.push('### Other changes', '', ...verdict.other.map(line), '');
  if (!verdict.breaking.length && !verdict.other.length) out.push('No change.', '');
  return out.join('\n');
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const RELEASED_PATH = join(ROOT, 'openapi/released/openapi.json');
export const CURRENT_PATH = join(ROOT, 'generated/openapi.json');
export const CHANGELOG_PATH = join(ROOT, 'docs/CONTRACT-CHANGELOG.md');
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Json;

/**
 * Records a release: generated/openapi.json becomes openapi/released/openapi.json, and the
 * changelog gets its section (compared with the release before, or with `baseline` for the first).
 * Refused when the contract changed without a new info.version, or broke without a new major.
 */
export function release(baseline = RELEASED_PATH, date = new Date().toISOString().slice(0, 10)): Verdict {
  const verdict = judge(read(baseline), read(CURRENT_PATH));
  if (verdict.refused) throw new Error(`${verdict.breaking.length} breaking change(s) without a new major version (${verdict.from} -> ${verdict.to}): raise info.version's major in openapi/openapi.yaml`);
  if (verdict.from === verdict.to && existsSync(RELEASED_PATH)) throw new Error(`info.version is still ${verdict.to}: raise it in openapi/openapi.yaml (make generate) before releasing`);
  const changelog = readFileSync(CHANGELOG_PATH, 'utf8');
  const marker = '<!-- releases: newest first, each section written by scripts/contract-diff.ts --release -->\n';
  if (!changelog.includes(marker)) throw new Error(`${CHANGELOG_PATH} lacks its marker line`);
  writeFileSync(CHANGELOG_PATH, changelog.replace(marker, `${marker}\n${changelogSection(verdict, date)}`));
  mkdirSync(dirname(RELEASED_PATH), { recursive: true });
  copyFileSync(CURRENT_PATH, RELEASED_PATH);
  return verdict;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  if (args[0] === '--release') {
    const verdict = release(args[1]);
    console.error(`released ${verdict.to}: ${verdict.breaking.length} breaking, ${verdict.other.length} other change(s)`);
    process.exit(0);
  }
  const verdict = judge(read(args[0] ?? RELEASED_PATH), read(args[1] ?? CURRENT_PATH));
  process.stdout.write(changelogSection(verdict, new Date().toISOString().slice(0, 10)) + '\n');
  if (verdict.refused) {
    console.error(`${verdict.breaking.length} breaking change(s) without a new major version (${verdict.from} -> ${verdict.to})`);
    process.exit(1);
  }
}
