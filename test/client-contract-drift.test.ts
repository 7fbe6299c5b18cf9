// The client package's copy of the contract (clients/typescript/src/contract/) is what
// scripts/client-contract.ts derives from generated/ now: `make generate` (or `make client`) after
// a change of the contract, and commit the result.
import { describe, expect, it } from 'vitest';
import { clientContractDrift, renderClientContract } from '../scripts/client-contract.js';

describe('the client package’s contract', () => {
  it('matches generated/ (run make client)', () => {
    expect(clientContractDrift()).toEqual([]);
  });

  it('knows every create: each operation declaring an Idempotency-Key, and only those', () => {
    const operations = renderClientContract()['operations.ts']!;
    for (const create of ['POST /tasks', 'POST /users', 'POST /webhook-endpoints', 'POST /api-keys/{id}/rotate']) expect(operations).toContain(JSON.stringify(create));
    for (const other of ['POST /tokens', 'POST /sessions', 'POST /webhook-endpoints/{id}/rotate']) expect(operations).not.toContain(JSON.stringify(other));
  });
});
