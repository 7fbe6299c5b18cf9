// The export and the retention on the embedded database (PGlite, one connection): a person's
// document streamed page by page while every page is its own statement on that connection, and
// the maintenance step's retention statements.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { buildService } from '../src/main.js';
import { loadConfig } from '../src/config.js';
import { captureLogs } from './support/context.js';
import { createUser } from './support/sessions.js';
import { maintain } from '../src/maintenance/sweeper.js';
import { EXPORT_PAGE } from '../src/personal-data/service.js';
import { budget } from './support/budgets.js';

const dataDir = mkdtempSync(join(tmpdir(), 'backoffice-pglite-export-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('personal data on the embedded database', () => {
  it('exports a person with a long history, and applies the retention', { timeout: budget({ pgliteStart: 1, passwordHash: 2 }) }, async () => {
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, MESSAGE_RETENTION_DAYS: '2' });
    const service = await buildService(config, captureLogs().logger);
    try {
      const { db } = service.database;
      expect(service.database.kind).toBe('embedded');
      const person = await createUser(db);
      const count = EXPORT_PAGE + 20;
      await sql`
        insert into security_events (type, occurred_at, user_id, actor_type, actor_id, details)
        select 'tokens_refreshed', now() - (n || ' seconds')::interval, ${person.id}, 'user', ${person.id}, '{}'
        from generate_series(1, ${count}) n`.execute(db);
      const set = await request(service.app).post('/sessions').send({ session: { email: person.email, password: person.password } });
      expect(set.status).toBe(201);
      await db.updateTable('sessions').set({ stepped_up_at: new Date(), step_up_method: 'password' }).where('user_id', '=', person.id).execute();
      const res = await request(service.app).get('/me/export').set('authorization', `Bearer ${set.body.access_token}`).set('x-api-inflection', 'camel');
      expect(res.status, res.text).toBe(200);
      expect(res.body.user.id).toBe(person.id);
      expect(res.body.auditEvents.filter((e: { type: string }) => e.type === 'tokens_refreshed')).toHaveLength(count);
      // The connection is free again: the next request is answered.
      expect((await request(service.app).get('/me').set('authorization', `Bearer ${set.body.access_token}`)).status).toBe(200);

      const old = new Date(Date.now() - 3 * 86_400_000);
      await db.insertInto('messages').values({ recipient: person.email, kind: 'invitation', language: 'en', subject: 's', body: 'b', created_at: old, sent_at: old }).execute();
      const done = await maintain(db, new Date(), config.sweep.policy, config.sweep.auditRetentionS, config.sweep.retention);
      expect(done.messages).toBe(1);
      expect(await db.selectFrom('messages').select('id').execute()).toEqual([]);
    } finally {
      await service.stopBackgroundWork();
      await service.database.close();
    }
  });
});
