// A streamed JSON body (src/http/streamed-body.ts) is read only as fast as the client takes it: a
// client that stops reading stops the reading of the next items, and one that goes away ends the
// sequence (its pages are no longer read). And it is the document res.json would have written, in
// every key style.
import { once } from 'node:events';
import { createServer, get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeStreamedJson } from '../src/http/streamed-body.js';
import { KeyInflector } from '../src/contract/inflection.js';
import { StreamedJson } from '../src/streamed-json.js';
import { spec } from './support/context.js';

const inflector = new KeyInflector(spec);
const schema = { $ref: '#/components/schemas/PersonalDataExport' };
const TOTAL = 200_000;

/** A sequence of TOTAL tasks, counting how many were pulled and whether it was closed early. */
function tasks() {
  const state = { pulled: 0, closed: false };
  async function* items() {
    try {
      for (let i = 0; i < TOTAL; i++) {
        state.pulled += 1;
        yield { id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, title: `task number ${i} with a title long enough to weigh something`, relations: ['assignee' as const] };
      }
    } finally {
      state.closed = true;
    }
  }
  return { state, items: items() };
}

let close: (() => void) | undefined;
afterEach(() => close?.());

let served: Response | undefined;
async function serve(doc: () => StreamedJson<object>, style: 'snake' | 'camel' = 'snake') {
  const app = express();
  app.get('/', (_req, res, next) => {
    served = res;
    void writeStreamedJson(res, doc(), inflector, schema, style).catch(next);
  });
  const server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  close = () => {
    server.closeAllConnections();
    server.close();
  };
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const request = (url: string) => new Promise<IncomingMessage>((resolve) => get(url, resolve));
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/** Waits until `count` has moved and then reads the same twice `settle` apart (a walk that never stops fails the test at its timeout). */
async function stoppedAdvancing(count: () => number): Promise<void> {
  let before = count();
  for (;;) {
    await settle();
    if (count() === before && before > 0) return;
    before = count();
  }
}

describe('a streamed JSON body', () => {
  it('is read as the client reads it: a client that stops reading stops the walk, one that goes away ends it', async () => {
    const { state, items } = tasks();
    const url = await serve(() => new StreamedJson({ format: 'x', tasks: items } as never));
    const res = await request(url);
    res.pause();
    // The walk stops once the socket's buffers are full (however slow the machine is to fill them),
    // and they hold a few hundred kilobytes at most, not the 20 MB of the document.
    await stoppedAdvancing(() => state.pulled);
    expect(state.pulled).toBeGreaterThan(0);
    expect(state.pulled).toBeLessThan(TOTAL / 4);
    res.destroy();
    await vi.waitFor(() => expect(state.closed).toBe(true), { timeout: 20_000 });
    expect(state.pulled).toBeLessThan(TOTAL / 4);
  });

  it('a client that reads in starts and stops, backpressuring the writer again and again, leaves no listener behind per wait', async () => {
    const { items } = tasks();
    const url = await serve(() => new StreamedJson({ format: 'x', tasks: items } as never));
    const res = await request(url);
    res.pause();
    for (let round = 0; round < 15; round++) {
      await new Promise((resolve) => setTimeout(resolve, 40));
      // Take what is buffered, so the socket drains and the writer runs into its next wait.
      while (res.read() !== null);
    }
    await new Promise((resolve) => setTimeout(resolve, 40));
    // One wait at a time is pending: its listeners, and none of the waits already over.
    expect(served!.listenerCount('close')).toBeLessThanOrEqual(2);
    expect(served!.listenerCount('drain')).toBeLessThanOrEqual(1);
    res.destroy();
  });

  it('is the document res.json would write, in the client key style, every member in order', async () => {
    const rows = [
      { id: '00000000-0000-4000-8000-000000000001', title: 'one', relations: ['creator' as const] },
      { id: '00000000-0000-4000-8000-000000000002', title: 'two', relations: ['assignee' as const, 'creator' as const] },
    ];
    async function* sequence() {
      yield* rows;
    }
    const whole = { format: 'backoffice.personal-data.v1', exported_at: '2026-12-15T10:00:00.000Z', invitations_sent: [], tasks: rows };
    const url = await serve(() => new StreamedJson({ format: whole.format, exported_at: whole.exported_at, invitations_sent: (async function* () {})(), tasks: sequence() } as never), 'camel');
    const res = await request(url);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    let text = '';
    for await (const chunk of res) text += String(chunk);
    expect(text).toBe(JSON.stringify(inflector.toStyle(whole, schema, 'camel')));
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['format', 'exportedAt', 'invitationsSent', 'tasks']);
  });
});
