// The mock's 400s tell of the request they answer: Prism answers an invalid request with
// the 400's example, whose detail was about another request; scripts/mock-server.ts puts in what
// Prism found instead, worded as the service words it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type PrismProcess } from './support/prism.js';
import { budget } from './support/budgets.js';

let prism: PrismProcess;
beforeAll(async () => {
  prism = await startMock('snake');
}, budget({ mockStart: 1 }));
afterAll(() => prism?.stop());

describe('the mock\'s 400 detail', () => {
  it('names what is wrong with this request, as the service does', async () => {
    const limit = await fetch(`${prism.url}/tasks?limit=abc`, { headers: { 'x-api-key': 'any', accept: 'application/json' } });
    expect(limit.status).toBe(400);
    expect(await limit.json()).toMatchObject({ code: 'validation_failed', detail: 'request/query/limit must be integer', errors: [{ location: 'request/query/limit', message: 'must be integer' }] });

    const signIn = await fetch(`${prism.url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ session: { email: 'ada@example.com' } }) });
    expect(signIn.status).toBe(400);
    expect(await signIn.json()).toMatchObject({ code: 'validation_failed', detail: "request/body/session must have required property 'password'" });
  });
});
