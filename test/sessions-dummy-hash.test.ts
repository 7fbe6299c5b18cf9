// An unknown e-mail still costs one full argon2id verification (against a dummy hash), so that
// it answers in the same time as a wrong password. Proven by counting verifications, not by timing.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser } from './support/sessions.js';

const verifications = vi.hoisted(() => [] as string[]);
vi.mock('../src/auth/secrets/passwords.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/auth/secrets/passwords.js')>();
  return {
    ...original,
    verifyPassword: async (hash: string, password: string) => {
      verifications.push(hash);
      return original.verifyPassword(hash, password);
    },
  };
});

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

it('verifies against a full-cost argon2id hash for an unknown e-mail, and for a wrong password', async () => {
  const { app } = createTestApp(database.db);
  const user = await createUser(database.db);
  verifications.length = 0;
  await request(app).post('/sessions').send({ session: { email: 'nobody@example.com', password: 'some password' } }).expect(401);
  expect(verifications).toHaveLength(1);
  expect(verifications[0]).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  verifications.length = 0;
  await request(app).post('/sessions').send({ session: { email: user.email, password: 'some password' } }).expect(401);
  expect(verifications).toHaveLength(1);
  expect(verifications[0]).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
});
