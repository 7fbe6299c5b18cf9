// Leaked-key reports from a secret-scanning partner, on the model of GitHub's secret scanning
// partner program: a signed list of `{token, type, url, source}`; every token that is a key's
// current secret revokes that key, and every token that is a previous secret still in its grace
// period (the key was rotated) stops that secret at once, all in one transaction (decision in
// docs/PARTNER-KEYS.md, "Leaked keys"); the answer says per token
// whether it was one (`true_positive`), naming it by its SHA-256 only. Unknown, malformed and
// already revoked tokens are all `false_positive`, so the answer tells them apart for nobody.
//
// The signature: ECDSA P-256 with SHA-256 over the body's exact bytes, base64 DER, made with a
// private key whose public half the deployment trusts (LEAK_REPORT_KEYS_FILE, in the format of
// GitHub's https://api.github.com/meta/public_keys/secret_scanning). GitHub signs nothing but the
// body, so a report can be sent again as it is: that changes nothing, since its keys are revoked.
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Dependencies } from '../dependencies.js';
import { refused } from '../errors.js';
import { digestSecret } from '../auth/secrets/secrets.js';
import { isWellFormedApiKey } from './secret.js';
import { updateKey } from './repository.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { recordAuditEvent } from '../audit/recorder.js';
import type { Origin } from '../audit/context.js';
import { iso } from '../audit/changes.js';

export interface LeakReport {
  token: string;
  type?: string;
  url?: string;
  source?: string;
}

export interface LeakAnswer {
  token_hash: string;
  token_type: string;
  label: 'true_positive' | 'false_positive';
}

/** The public keys that may sign reports, by identifier, and the name the journal gives their holder. */
export interface ReporterKeys {
  reporter: string;
  keys: Map<string, KeyObject>;
}

/**
 * Reads LEAK_REPORT_KEYS_FILE: `{"reporter"?: name, "public_keys": [{"key_identifier", "key"}]}`
 * (GitHub's published file works as it is; `reporter` defaults to "GitHub secret scanning").
 * A file that does not parse stops the service at start, naming the problem.
 */
export function loadReporterKeys(path: string): ReporterKeys {
  const file = JSON.parse(readFileSync(path, 'utf8')) as { reporter?: unknown; public_keys?: { key_identifier?: unknown; key?: unknown }[] };
  if (!Array.isArray(file.public_keys) || file.public_keys.length === 0) throw new Error(`${path}: expected "public_keys", a non-empty list`);
  const keys = new Map<string, KeyObject>();
  for (const entry of file.public_keys) {
    if (typeof entry.key_identifier !== 'string' || typeof entry.key !== 'string') throw new Error(`${path}: each public key needs "key_identifier" and "key" (PEM)`);
    const key = createPublicKey(entry.key);
    if (key.asymmetricKeyType !== 'ec') throw new Error(`${path}: key ${entry.key_identifier} is not an ECDSA key`);
    keys.set(entry.key_identifier, key);
  }
  return { reporter: typeof file.reporter === 'string' ? file.reporter : 'GitHub secret scanning', keys };
}

const invalidSignature = () => refused('invalid_signature', 'The report is not signed by a key this deployment trusts: nothing was changed.');

/** Whether `signature` (base64 DER) over `body` verifies with the trusted key named `keyId`. */
export function signatureVerifies(reporters: ReporterKeys | null, keyId: string | undefined, signature: string | undefined, body: Buffer | undefined): boolean {
  const key = keyId === undefined ? undefined : reporters?.keys.get(keyId);
  if (!key || signature === undefined || body === undefined) return false;
  try {
    return verify('sha256', body, { key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

/** A previous secret stops at once, as a rotation without a grace period stops it (the row is deleted). */
async function stopSecret(trx: Kysely<Database>, digest: Buffer): Promise<void> {
  await trx.deleteFrom('api_key_secrets').where('digest', '=', digest).where('retires_at', 'is not', null).execute();
}

export class LeakReportService {
  constructor(
    private readonly deps: Pick<Dependencies, 'db' | 'clock'>,
    private readonly reporters: ReporterKeys | null,
  ) {}

  async report(signed: { keyId?: string; signature?: string; body?: Buffer }, reports: LeakReport[], origin: Origin): Promise<LeakAnswer[]> {
    const { db, clock } = this.deps;
    const reporters = this.reporters;
    if (!signatureVerifies(reporters, signed.keyId, signed.signature, signed.body)) throw invalidSignature();
    const now = clock.now();
    const digests = new Map<string, LeakReport>();
    for (const report of reports) {
      if (!isWellFormedApiKey(report.token)) continue;
      const digest = digestSecret(report.token).toString('hex');
      if (!digests.has(digest)) digests.set(digest, report);
    }
    const leaked = new Set<string>();
    if (digests.size > 0) {
      await db.transaction().execute(async (trx) => {
        // Keys in use whose current secret, or a previous one still in its grace period, was
        // reported; locked in id order, so two reports naming the same keys queue.
        const rows = await trx
          .selectFrom('api_key_secrets as s')
          .innerJoin('api_keys as k', 'k.id', 's.api_key_id')
          .select(['k.id', 'k.name', 'k.created_by', 's.digest', 's.retires_at'])
          .where('s.digest', 'in', [...digests.keys()].map((hex) => Buffer.from(hex, 'hex')))
          .where('k.revoked_at', 'is', null)
          .where((eb) => eb.or([eb('s.retires_at', 'is', null), eb('s.retires_at', '>', now)]))
          .orderBy('k.id')
          .forUpdate('k')
          .execute();
        for (const row of rows) leaked.add(row.digest.toString('hex'));
        const event = (row: (typeof rows)[number], secret: 'current' | 'previous') => {
          const report = digests.get(row.digest.toString('hex'))!;
          return {
            type: 'api_key_leak_reported' as const,
            at: now,
            context: { actor: { type: 'anonymous' as const }, requestId: origin.requestId, ip: origin.ip, userAgent: origin.userAgent },
            target: { type: 'api_key' as const, id: row.id, label: row.name },
            userId: row.created_by,
            details: { reporter: reporters!.reporter, reporter_key: signed.keyId!, url: report.url ?? null, source: report.source ?? null, leaked: secret },
          };
        };
        // The current secret leaked: the key is revoked (its previous secrets with it).
        const revoked = new Set<string>();
        for (const row of rows.filter((r) => r.retires_at === null)) {
          if (revoked.has(row.id)) continue;
          revoked.add(row.id);
          await updateKey(trx, row.id, { revoked_at: now, now });
          await recordAuditEvent(trx, { ...event(row, 'current'), changes: { before: { revoked_at: null }, after: { revoked_at: iso(now) } } });
        }
        // Only a previous secret leaked, in its grace period: that secret stops now; the key and
        // the secret that replaced it stay in force.
        for (const row of rows.filter((r) => r.retires_at !== null && !revoked.has(r.id))) {
          await stopSecret(trx, row.digest);
          await recordAuditEvent(trx, {
            ...event(row, 'previous'),
            changes: { before: { previous_secret_retires_at: iso(row.retires_at) }, after: { previous_secret_retires_at: iso(now) } },
          });
        }
      });
    }
    return reports.map((report) => {
      const digest = isWellFormedApiKey(report.token) ? digestSecret(report.token).toString('hex') : undefined;
      return {
        token_hash: createHash('sha256').update(report.token).digest('hex'),
        token_type: report.type ?? '',
        label: digest !== undefined && leaked.has(digest) ? 'true_positive' : 'false_positive',
      };
    });
  }
}
