// The operation a request addresses is found among the templates of its path's first segment only
// (src/contract/spec.ts). It must be the operation a walk of every template in the contract's order
// finds, for every path: the contract's own and paths next to them.
import { describe, expect, it } from 'vitest';
import { indexOperations, pathPattern, routeMatcher, type OperationInfo, type RouteMatch } from '../src/contract/spec.js';
import { spec } from './support/context.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The walk of every template in turn, as the matcher did before its index: the reference. */
function everyTemplateInTurn(operations: OperationInfo[]) {
  const templates = [...new Set(operations.map((op) => op.path))];
  return (method: string, path: string): Omit<RouteMatch, 'pathParams'> => {
    let pathTemplate: string | undefined;
    for (const template of templates) {
      if (!pathPattern(template).test(path)) continue;
      pathTemplate ??= template;
      const operation = operations.find((op) => op.path === template && op.method.toUpperCase() === method);
      if (operation) return { pathTemplate: template, operation };
    }
    return { pathTemplate, operation: undefined };
  };
}

/** Paths made from each template (its parameters filled in several ways) and their near misses. */
function pathsAround(templates: string[]): string[] {
  const fillings = ['x', 'current', '0b1e5c4e-4a7b-4f7e-9d3c-2f6a8b9c1d2e', '%41%42', 'me'];
  const paths = new Set(['/', '', '/unknown', '/unknown/x', '//', '/%6Deetings']);
  for (const template of templates) {
    for (const filling of fillings) {
      const path = template.replace(/\{[^}]+\}/g, filling);
      for (const variant of [path, `${path}/`, `${path}/extra`, path.toUpperCase(), `${path}//`]) paths.add(variant);
    }
  }
  return [...paths];
}

function expectSameAsTheWalk(operations: OperationInfo[], paths: string[]) {
  const match = routeMatcher(operations);
  const reference = everyTemplateInTurn(operations);
  let compared = 0;
  for (const path of paths) {
    for (const method of METHODS) {
      const { pathTemplate, operation } = match(method, path);
      expect({ method, path, pathTemplate, operationId: operation?.operationId }).toEqual({
        method,
        path,
        pathTemplate: reference(method, path).pathTemplate,
        operationId: reference(method, path).operation?.operationId,
      });
      compared++;
    }
  }
  return compared;
}

describe('the route matcher', () => {
  it("finds, for every path made from the contract's templates and their near misses, what a walk of every template finds", () => {
    const operations = indexOperations(spec);
    const compared = expectSameAsTheWalk(operations, pathsAround(operations.map((op) => op.path)));
    expect(compared).toBeGreaterThan(5000);
  });

  it('tries a template that starts with a parameter for every path, in its place in the order', () => {
    const op = (path: string, method: string, operationId: string) => ({ path, method, operationId }) as OperationInfo;
    const operations = [
      op('/a/fixed', 'get', 'aFixed'),
      op('/{any}/fixed', 'get', 'anyFixed'),
      op('/{any}/fixed', 'post', 'anyFixedPost'),
      op('/a/{id}', 'get', 'aById'),
      op('/b/fixed', 'post', 'bFixedPost'),
      op('/{any}', 'delete', 'anyDelete'),
    ];
    expectSameAsTheWalk(operations, pathsAround(operations.map((o) => o.path)));
    const match = routeMatcher(operations);
    expect(match('POST', '/a/fixed').operation?.operationId).toBe('anyFixedPost');
    expect(match('GET', '/b/fixed').operation?.operationId).toBe('anyFixed');
    expect(match('POST', '/b/fixed').operation?.operationId).toBe('anyFixedPost');
    expect(match('DELETE', '/zzz').operation?.operationId).toBe('anyDelete');
    expect(match('GET', '/a/fixed').operation?.operationId).toBe('aFixed');
  });
});
