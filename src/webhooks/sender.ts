// One HTTP attempt of a delivery: POST the signed body, at most `timeoutMs` in all, no redirect
// followed (node's http client never follows one; a 3xx is a failure like any non-2xx), the
// receiver's answer read up to a few hundred bytes. Connections go through agents whose lookup
// refuses non-public addresses, and each new socket's remote address is checked once connected
// (src/webhooks/ssrf.ts), so what is judged is the address actually connected to.
import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import { addressAllowed, guardedLookup, RefusedAddressError, type UrlPolicy } from './ssrf.js';

/** The first characters of the receiver's answer that are kept (the contract's WebhookDelivery.last_response). */
export const KEPT_RESPONSE_CHARS = 256;
const READ_LIMIT_BYTES = 1024;

export interface Attempt {
  /** The receiver's status, when it answered. */
  status: number | null;
  ok: boolean;
  durationMs: number;
  /** Why it failed: `timeout`, `address_refused`, `connection_failed`, `status_<code>`. */
  error: string | null;
  response: string | null;
}

export interface Sender {
  post(url: string, headers: Record<string, string>, body: string): Promise<Attempt>;
  close(): void;
}

export function createSender(policy: UrlPolicy & { timeoutMs: number }): Sender {
  const lookup = guardedLookup(policy) as unknown as http.AgentOptions['lookup'];
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, lookup } as http.AgentOptions),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, lookup } as https.AgentOptions),
  };
  return {
    post(url, headers, body) {
      const started = performance.now();
      const done = (partial: Omit<Attempt, 'durationMs' | 'ok'>): Attempt => ({
        ...partial,
        ok: partial.status !== null && partial.status >= 200 && partial.status < 300 && partial.error === null,
        durationMs: Math.round(performance.now() - started),
      });
      return new Promise<Attempt>((resolve) => {
        let target: URL;
        try {
          target = new URL(url);
        } catch {
          return resolve(done({ status: null, error: 'invalid_url', response: null }));
        }
        const agent = agents[target.protocol as 'http:' | 'https:'];
        if (!agent || (target.protocol === 'http:' && !policy.allowPrivate)) return resolve(done({ status: null, error: 'address_refused', response: null }));
        // An address written in the URL is connected to without a lookup: judged before connecting.
        const literal = target.hostname.replace(/^\[|\]$/g, '');
        if (isIP(literal) && !addressAllowed(literal, policy)) return resolve(done({ status: null, error: 'address_refused', response: null }));
        const client = target.protocol === 'https:' ? https : http;
        let settled = false;
        const finish = (attempt: Attempt) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(attempt);
        };
        const request = client.request(target, {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'backoffice-api-webhooks/1' },
        });
        const timer = setTimeout(() => {
          finish(done({ status: null, error: 'timeout', response: null }));
          request.destroy();
        }, policy.timeoutMs);
        request.on('socket', (socket: Socket) => {
          // A reused keep-alive socket was checked when it connected.
          const check = () => {
            if (socket.remoteAddress && !addressAllowed(socket.remoteAddress, policy)) request.destroy(new RefusedAddressError(`connected to ${socket.remoteAddress}`));
          };
          if (socket.remoteAddress) check();
          else socket.once('connect', check);
        });
        request.on('error', (err: Error & { code?: string }) => {
          const refused = err instanceof RefusedAddressError || err.code === 'address_refused';
          finish(done({ status: null, error: refused ? 'address_refused' : 'connection_failed', response: null }));
        });
        request.on('response', (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const end = () => {
            const text = Buffer.concat(chunks).toString('utf8').slice(0, KEPT_RESPONSE_CHARS);
            const status = response.statusCode ?? null;
            const ok = status !== null && status >= 200 && status < 300;
            finish(done({ status, error: ok ? null : `status_${status}`, response: text }));
            // The rest of a long answer is not read: the socket goes, not back to the pool.
            if (size >= READ_LIMIT_BYTES) response.destroy();
          };
          response.on('data', (chunk: Buffer) => {
            if (size >= READ_LIMIT_BYTES) return;
            chunks.push(chunk);
            size += chunk.length;
            if (size >= READ_LIMIT_BYTES) end();
          });
          response.on('end', end);
          response.on('error', () => finish(done({ status: response.statusCode ?? null, error: 'connection_failed', response: null })));
        });
        request.end(body);
      });
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
