// The contract never breaks partners by surprise (docs/CONTRACT-CHANGELOG.md): generated/openapi.json
// against the last released contract (openapi/released/openapi.json), and each rule of
// scripts/contract-diff.ts shown to catch the breaking change it is for.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compareContracts, judge, CURRENT_PATH, RELEASED_PATH, CHANGELOG_PATH } from '../scripts/contract-diff.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Json;
const released = read(RELEASED_PATH);
const current = read(CURRENT_PATH);

describe('the contract against the last released one', () => {
  it('has no breaking change unless its major version is higher', () => {
    const verdict = judge(released, current);
    expect(verdict.refused, verdict.breaking.map((c) => `${c.where}: ${c.message} (${c.rule})`).join('\n')).toBe(false);
  });

  it('has a version, and the released version has its section in the changelog', () => {
    expect(current.info.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(readFileSync(CHANGELOG_PATH, 'utf8')).toContain(`## ${released.info.version} (`);
  });
});

/** The released contract changed by `mutate`: the rules its comparison reports as breaking. */
function breakingAfter(mutate: (c: Json) => void): string[] {
  const next = structuredClone(released);
  mutate(next);
  return compareContracts(released, next).filter((c) => c.severity === 'breaking').map((c) => c.rule);
}
const schemas = (c: Json) => c.components.schemas;

describe('each breaking change is caught', () => {
  it.each<[string, (c: Json) => void, string]>([
    ['an operation removed', (c) => delete c.paths['/tasks'].post, 'operation-removed'],
    ['an operation renamed (its path)', (c) => { c.paths['/todo/{id}'] = c.paths['/tasks/{id}']; delete c.paths['/tasks/{id}']; }, 'operation-removed'],
    ['an operationId renamed', (c) => (c.paths['/tasks'].post.operationId = 'makeTask'), 'operation-id-renamed'],
    ['an event removed', (c) => delete c.webhooks['task.deleted'], 'event-removed'],
    ['a response field removed', (c) => delete schemas(c).Task.properties.title, 'response-field-removed'],
    ['a response field renamed', (c) => { const t = schemas(c).Task; t.properties.name = t.properties.title; delete t.properties.title; t.required = t.required.map((r: string) => (r === 'title' ? 'name' : r)); }, 'response-field-removed'],
    ['a response field made optional', (c) => (schemas(c).Task.required = schemas(c).Task.required.filter((r: string) => r !== 'title')), 'response-field-optional'],
    ['a response field made nullable', (c) => (schemas(c).Task.properties.title.type = ['string', 'null']), 'response-field-nullable'],
    ['an event payload field removed', (c) => delete schemas(c).TaskEvent.properties.occurred_at, 'response-field-removed'],
    ['a request field made required', (c) => schemas(c).TaskCreateRequest.required.push('description'), 'request-field-required'],
    ['a new required request field', (c) => { schemas(c).TaskCreateRequest.properties.project = { type: 'string' }; schemas(c).TaskCreateRequest.required.push('project'); }, 'request-field-required'],
    ['a request field removed from a closed body', (c) => delete schemas(c).TaskCreateRequest.properties.due_at, 'request-field-removed'],
    ['an enum value removed', (c) => (schemas(c).TaskStatus.enum = schemas(c).TaskStatus.enum.filter((v: string) => v !== 'done')), 'enum-value-removed'],
    ['a narrower request type (maxLength)', (c) => (schemas(c).TaskCreateRequest.properties.title.maxLength = 100), 'request-type-narrowed'],
    ['a narrower request type (null no longer accepted)', (c) => (schemas(c).TaskCreateRequest.properties.description.type = 'string'), 'request-type-narrowed'],
    ['a narrower request type (a pattern)', (c) => (schemas(c).TaskCreateRequest.properties.title.pattern = '^[a-z]+$'), 'request-type-narrowed'],
    ['a query parameter made required', (c) => (c.components.parameters.Limit.required = true), 'parameter-required'],
    ['a query parameter removed', (c) => (c.paths['/tasks'].get.parameters = c.paths['/tasks'].get.parameters.filter((p: Json) => p.$ref !== '#/components/parameters/TaskSearch')), 'parameter-removed'],
    ['a success status removed', (c) => delete c.paths['/tasks'].post.responses['201'], 'success-response-removed'],
    ['a response header removed', (c) => delete c.components.responses.TaskCreated.headers.ETag, 'response-header-removed'],
    ['a credential no longer accepted', (c) => (c.paths['/tasks'].get.security = [{ bearerAuth: [] }]), 'security-scheme-removed'],
    ['another permission required', (c) => (c.paths['/tasks'].get['x-required-permission'] = 'tasks.read'), 'permission-changed'],
    ['a step-up required', (c) => (c.paths['/tasks'].post['x-step-up'] = 'always'), 'step-up-required'],
  ])('%s', (_name, mutate, rule) => {
    expect(breakingAfter(mutate)).toContain(rule);
  });

  it('allows them with a new major version, and not with a new minor one', () => {
    const next = structuredClone(released);
    delete next.paths['/tasks'].post;
    const [major, minor] = (released.info.version as string).split('.').map(Number) as [number, number];
    next.info.version = `${major}.${minor + 1}.0`;
    expect(judge(released, next).refused).toBe(true);
    next.info.version = `${major + 1}.0.0`;
    expect(judge(released, next).refused).toBe(false);
  });

  it('does not call additions breaking: a new operation, event, optional field or parameter, a response enum value', () => {
    expect(breakingAfter((c) => {
      c.paths['/projects'] = { get: structuredClone(c.paths['/tasks'].get) };
      c.paths['/projects'].get.operationId = 'listProjects';
      c.webhooks['task.archived'] = structuredClone(c.webhooks['task.deleted']);
      schemas(c).TaskCreateRequest.properties.project = { type: 'string' };
      schemas(c).Task.properties.project = { type: 'string' };
      c.paths['/tasks'].get.parameters.push({ name: 'project', in: 'query', required: false, schema: { type: 'string' } });
      schemas(c).EventType.enum.push('task.archived');
      schemas(c).TaskCreateRequest.properties.title.maxLength = 400;
    })).toEqual([]);
  });
});
