// The reference shows, on every operation, the permission the server enforces: the line is written
// by a Redocly decorator from x-required-permission at bundle time, so it cannot drift from it.
import { describe, expect, it } from 'vitest';
import { spec } from './support/context.js';
import { indexOperations } from '../src/contract/spec.js';
// @ts-expect-error the Redocly plugin is plain JavaScript without type declarations
import { requiredPermissionLine } from '../redocly/permissions-plugin.js';

describe('required permission in the docs', () => {
  it('ends every secured operation\u2019s description with its x-required-permission, and nothing else names one', () => {
    for (const op of indexOperations(spec)) {
      const declared = op.raw['x-required-permission'] as string | undefined;
      const description = String(op.raw.description ?? '');
      const lines = description.split('\n').filter((l) => l.startsWith('**Required permission:**'));
      if (declared === undefined) {
        expect(lines, op.operationId).toEqual([]);
      } else {
        expect(lines, op.operationId).toEqual([(requiredPermissionLine as (p: string) => string)(declared)]);
        expect(description.trimEnd().endsWith(lines[0]!)).toBe(true);
      }
    }
  });
});
