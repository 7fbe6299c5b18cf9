// The baseline of the users benchmark: a bare Express app answering GET /users with the same 50
// users, already serialised in memory. No database, no auth, no validation, no logging.
import { readFileSync } from 'node:fs';
import express from 'express';

const body = readFileSync(process.env.USERS_JSON_FILE ?? '', 'utf8');
const app = express();
app.disable('x-powered-by');
app.get('/users', (_req, res) => {
  res.type('application/json').send(body);
});
app.listen(Number(process.env.PORT), '127.0.0.1');
