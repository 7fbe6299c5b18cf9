// A stand-in secret-scanning partner: its own ECDSA P-256 key pair, the keys file a deployment
// would trust (GitHub's published format), and reports signed the way GitHub signs them.
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LeakReporter {
  keyId: string;
  /** LEAK_REPORT_KEYS_FILE for the service. */
  keysFile: string;
  /** A POST /api-keys/leaked request with this body, signed (or signed by `signer` instead). */
  request(body: string, signer?: LeakReporter): { method: 'POST'; path: string; headers: Record<string, string>; body: string };
  sign(body: string): string;
}

export function leakReporter(keyId = 'f9525bf080f75b3506ca1ead061add62b8633a346606dc5fe544e29231c6ee0d'): LeakReporter {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keysFile = join(mkdtempSync(join(tmpdir(), 'leak-keys-')), 'keys.json');
  writeFileSync(keysFile, JSON.stringify({ public_keys: [{ key_identifier: keyId, key: publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }] }));
  const reporter: LeakReporter = {
    keyId,
    keysFile,
    sign: (body) => sign('sha256', Buffer.from(body), { key: privateKey, dsaEncoding: 'der' }).toString('base64'),
    request: (body, signer = reporter) => ({
      method: 'POST',
      path: '/api-keys/leaked',
      headers: { 'content-type': 'application/json', 'github-public-key-identifier': reporter.keyId, 'github-public-key-signature': signer.sign(body) },
      body,
    }),
  };
  return reporter;
}

export const reportOf = (tokens: string[], url = 'https://github.com/octocat/Hello-World/blob/main/.env') =>
  JSON.stringify(tokens.map((token) => ({ token, type: 'backoffice_api_key', url, source: 'content' })));
