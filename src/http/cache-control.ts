// Every answer of the API (each operation of the contract, and every error) depends on who asks:
// their rights, their session, their own data. No cache, shared or the browser's disk, may keep
// one. Set before anything can fail, so refusals carry it too; `Vary: x-api-inflection` is set by
// the inflection middleware. The web interface's files and the reference keep their own caching.
import type { RequestHandler } from 'express';

// res.setHeader, not Express's res.set: a fixed value needs none of its charset handling (a few
// µs on every request).
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};
