// GET /dev-mailbox/messages: the development mailbox (src/mail/dev-mailbox.ts), served outside the
// contract and only when it is on (never in production: src/config.ts). Outside the contract on
// purpose: it is no part of the API that clients, the mock or the reference should know, and a
// route that exists only in development must not be a declared operation that answers 404 in
// production. Signed-in administrators only (a bearer session holding every permission: the
// messages carry every person's links, and following one is acting as that person), with the same
// refusals as the API (problem+json, 401, 403). Answers `{ development_mailbox: true, data }`.
import type { RequestHandler } from 'express';
import type { Authenticators } from '../auth/principal.js';
import { bearerToken } from '../auth/bearer.js';
import { PERMISSIONS } from '../auth/permissions.js';
import { forbidden, unauthenticated } from '../errors.js';
import { clientAddressOf } from './request-context.js';
import type { MailboxMessage } from '../mail/dev-mailbox.js';

export const DEV_MAILBOX_PATH = '/dev-mailbox/messages';
const LIMIT = 50;

export function devMailboxRoute(mailbox: { latest(limit: number): Promise<MailboxMessage[]> } | undefined, authenticators: Authenticators): RequestHandler {
  return (req, res, next) => {
    if (!mailbox || req.path !== DEV_MAILBOX_PATH) return next();
    if (req.method !== 'GET') return next();
    void (async () => {
      const token = bearerToken(req.headers.authorization);
      if (!token) throw unauthenticated('unauthenticated', 'The development mailbox needs a signed-in administrator: Authorization: Bearer <access_token>.');
      const principal = await authenticators.bearer(token, { ip: clientAddressOf(req) });
      if (principal.kind !== 'user' || principal.passwordChangeRequired || principal.secondFactorRequired || PERMISSIONS.some((p) => !principal.permissions.has(p))) {
        throw forbidden('permission_denied', 'The development mailbox is for administrators (every permission).');
      }
      const data = await mailbox.latest(LIMIT);
      res.set('Cache-Control', 'no-store');
      res.json({ development_mailbox: true, data });
    })().catch(next);
  };
}
