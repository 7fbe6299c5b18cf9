// The shape of the secrets handed to clients (src/auth/secrets/secrets.ts): prefix, 43 uniformly random
// base62 characters, CRC32 checksum.
import { describe, expect, it } from 'vitest';
import { generateSecret, isWellFormedSecret } from '../src/auth/secrets/secrets.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('secrets', () => {
  it('have the prefix, a 43-character base62 body and a 6-character checksum that checks', () => {
    const secret = generateSecret('boa');
    expect(secret).toMatch(/^boa_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/);
    expect(isWellFormedSecret('boa', secret)).toBe(true);
    expect(isWellFormedSecret('bor', secret)).toBe(false);
    const body = secret.split('_')[1]!;
    const changed = secret.replace(body, body.slice(0, -1) + (body.endsWith('a') ? 'b' : 'a'));
    expect(isWellFormedSecret('boa', changed)).toBe(false);
  });

  it('still accept the secrets issued before the body was drawn character by character', () => {
    // Made by the earlier BigInt version of generateSecret: the checksum is unchanged.
    expect(isWellFormedSecret('boa', 'boa_rAOpGTaBLIluBEbALo2LoV0KRKS1K3BT73EOhYi39sl_3xDUEl')).toBe(true);
    expect(isWellFormedSecret('bok', 'bok_JyFYzY2DMAAN43YBkhjvcQ0onAJSpHaziDnO1YIcUuy_0kICdY')).toBe(true);
  });

  it('draw every base62 character equally often (no modulo bias)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i++) for (const c of generateSecret('bok').split('_')[1]!) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Taking every byte modulo 62, without skipping 248-255, would make the first 8 characters
    // 25 % more frequent than the others; the random spread here is about 1 %.
    const mean = (chars: string) => [...chars].reduce((sum, c) => sum + counts.get(c)!, 0) / chars.length;
    expect(mean(BASE62.slice(0, 8)) / mean(BASE62.slice(8))).toBeGreaterThan(0.95);
    expect(mean(BASE62.slice(0, 8)) / mean(BASE62.slice(8))).toBeLessThan(1.05);
  });
});

describe('security: pooled random bytes of secrets', () => {
  it('secrets drawn across many pool refills never repeat nor share their random body, and every character is about equally likely', () => {
    const secrets = Array.from({ length: 5000 }, () => generateSecret('bot'));
    expect(new Set(secrets).size).toBe(secrets.length);
    const bodies = secrets.map((s) => s.slice('bot_'.length, 'bot_'.length + 20));
    expect(new Set(bodies).size).toBe(bodies.length);
    const counts = new Map<string, number>();
    for (const s of bodies) for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (bodies.length * 20) / 62;
    const chi2 = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(140); // 61 degrees of freedom: p < 1e-7 beyond this
  });
});
