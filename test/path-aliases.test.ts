// The French path names are generated copies of their English paths: same parameters, bodies,
// responses, security and permission; only the operationId, summary and description differ.
import { describe, expect, it } from 'vitest';
import { spec } from './support/context.js';
import { withPathAliases } from '../src/contract/path-aliases.js';
import { indexOperations, type OpenApiDocument } from '../src/contract/spec.js';
import { operationRouter } from '../src/http/router.js';
import type { HandlerMap } from '../src/http/handler-types.js';

const withoutNames = (operation: Record<string, unknown>) => {
  const { operationId: _id, summary: _summary, description: _description, 'x-alias-of': _of, ...rest } = operation;
  return rest;
};

const ALIASES = [
  ['/utilisateurs', '/users', 'get', 'listUtilisateurs'],
  ['/jetons', '/tokens', 'post', 'refreshTokensJetons'],
  ['/reunions', '/meetings', 'get', 'listReunions'],
  ['/reunions', '/meetings', 'post', 'createReunion'],
  ['/reunions/{id}', '/meetings/{id}', 'get', 'getReunion'],
  ['/reunions/{id}', '/meetings/{id}', 'patch', 'updateReunion'],
  ['/reunions/{id}', '/meetings/{id}', 'delete', 'deleteReunion'],
] as const;

describe('path aliases', () => {
  it.each(ALIASES)('the bundle serves %s as a copy of %s', (alias, of, method, operationId) => {
    const copy = spec.paths[alias]![method]!;
    const original = spec.paths[of]![method]!;
    expect(copy.operationId).toBe(operationId);
    // Served by the original's handler (src/http/router.ts): the handler map has no entry of its own.
    expect(copy['x-alias-of']).toBe(original.operationId);
    expect(copy.description).toContain(`French name of \`${method.toUpperCase()} ${of}\``);
    expect(withoutNames(copy)).toEqual(withoutNames(original));
    expect(Object.keys(spec.paths[alias]!).filter((key) => key !== 'parameters')).toEqual(ALIASES.filter(([a]) => a === alias).map(([, , m]) => m));
    expect(spec).not.toHaveProperty('x-path-aliases');
  });

  it('refuses an alias of a path or a method the contract does not have', () => {
    const bundle = (aliases: unknown) => ({ openapi: '3.1.0', paths: { '/users': { get: { operationId: 'listUsers', summary: 'List' } } }, 'x-path-aliases': aliases }) as unknown as OpenApiDocument;
    expect(() => withPathAliases(bundle({ '/gens': { of: '/people', language: 'French', operations: { get: 'x' } } }))).toThrow(/not a path/);
    expect(() => withPathAliases(bundle({ '/gens': { of: '/users', language: 'French', operations: { post: 'x' } } }))).toThrow(/does not have/);
    expect(withPathAliases(bundle({ '/gens': { of: '/users', language: 'French', operations: { get: 'listGens' } } })).paths['/gens']!.get!.operationId).toBe('listGens');
  });

  it('the router refuses to start on an alias that is not guarded as its original (a hand-written x-alias-of)', () => {
    const operations = indexOperations(spec);
    const original = operations.find((op) => op.operationId === 'listUsers')!;
    const handlers = new Proxy({}, { get: () => async () => ({ status: 200 }) }) as unknown as HandlerMap;
    const authenticators = { apiKey: async () => Promise.reject(new Error('unused')), bearer: async () => Promise.reject(new Error('unused')), stepUp: async () => {} };
    const copy = { ...original, operationId: 'listGens', raw: { ...original.raw, 'x-alias-of': 'listUsers' } };
    expect(() => operationRouter([original, copy], handlers, authenticators)).not.toThrow();
    const weaker = { ...copy, requiredPermission: 'authenticated', raw: { ...copy.raw, 'x-required-permission': 'authenticated' } };
    expect(() => operationRouter([original, weaker], handlers, authenticators)).toThrow(/not an operation guarded alike/);
    const nowhere = { ...copy, raw: { ...copy.raw, 'x-alias-of': 'noSuchOperation' } };
    expect(() => operationRouter([original, nowhere], handlers, authenticators)).toThrow(/not an operation guarded alike/);
  });
});
