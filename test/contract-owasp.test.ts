// The contract passes Spectral's OWASP API Security ruleset with zero findings (`make lint` runs the
// same), and a rule is turned off only in the ruleset file, each with a line on why.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../src/paths.js';

const run = promisify(execFile);

describe("Spectral's OWASP ruleset", () => {
  it('finds nothing in the contract: no unbounded string, array or integer, no plain-HTTP server', async () => {
    const { stdout } = await run(join(PROJECT_ROOT, 'node_modules/.bin/spectral'), ['lint', 'generated/openapi.json', '--format', 'json', '--fail-severity', 'hint'], {
      cwd: PROJECT_ROOT,
    }).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
    const findings = (JSON.parse(stdout.slice(stdout.indexOf('['), stdout.lastIndexOf(']') + 1)) as { code: string; path: string[] }[]).map((f) => `${f.code} ${f.path.join('.')}`);
    expect(findings).toEqual([]);
  });

  it('turns rules off only in its ruleset file, each under a comment saying why', () => {
    const lines = readFileSync(join(PROJECT_ROOT, '.spectral.yaml'), 'utf8').split('\n');
    const off = lines.map((line, index) => ({ line, index })).filter(({ line }) => /:\s*off\s*$/.test(line));
    expect(off.length).toBeGreaterThan(0);
    for (const { line, index } of off) {
      // Up from the rule, past an override's `rules:`, its list of files and `- files:`, to a comment.
      const above = lines
        .slice(0, index)
        .reverse()
        .find((l) => !/^\s*(rules:|- files:|files:|- ".*")\s*$/.test(l));
      expect(above, line).toMatch(/^\s*#\s+\S.{20,}/);
    }
  });
});
