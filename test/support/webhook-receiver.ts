// A partner's webhook receiver on loopback: records every request to its own URL (headers and the
// body's bytes) and answers as the test says (a status, or never), verifying nothing itself: tests verify with
// the `standardwebhooks` library, as a partner's receiver would.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export type Behaviour = number | 'hang';

export async function startReceiver(behaviours: Behaviour[] = [], otherwise: Behaviour = 200) {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  // A path of its own: a port is reused by the next receiver once this one closes, and endpoints of
  // earlier tests (in this file or another running beside it) still retry their deliveries to it.
  // Those are answered 404 here, neither recorded nor given a behaviour meant for this test's.
  const path = `/hooks/${randomBytes(9).toString('base64url')}`;
  const server = createServer((req, res) => {
    if (req.url !== path) {
      req.resume();
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const w of waiters.filter((w) => received.length >= w.count)) w.resolve();
      const behaviour = behaviours.shift() ?? otherwise;
      if (behaviour === 'hang') return; // never answers; the socket closes when the sender gives up
      res.writeHead(behaviour, { 'content-type': 'text/plain' }).end(behaviour < 300 ? 'ok' : 'x'.repeat(5000));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    /** Resolves once `count` requests arrived. */
    until(count: number) {
      return received.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve }));
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
