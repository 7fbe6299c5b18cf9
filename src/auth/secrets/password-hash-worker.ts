// Runs in the password-hashing worker threads (see passwords.ts): one argon2id job per call. The
// synchronous functions are right here: this thread exists to do nothing else.
import { hashSync, verifySync, type Options } from '@node-rs/argon2';

export type HashJob = { op: 'hash'; password: string; options: Options } | { op: 'verify'; hash: string; password: string };

export default function run(job: HashJob): string | boolean {
  return job.op === 'hash' ? hashSync(job.password, job.options) : verifySync(job.hash, job.password);
}
