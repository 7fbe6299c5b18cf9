// The live passkey challenges a client address, and a session, may hold (docs/AUTH.md, "Passkeys"
// and "Step-up"): each number has one home, src/auth/second-factors/passkeys.ts, and the contract
// and the docs say it, so neither promises a number the code does not hold.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_LIVE_CHALLENGES_PER_ADDRESS, MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION } from '../src/auth/second-factors/passkeys.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { MAX_LIVE_STEP_UP_FLOWS_PER_SESSION } from '../src/auth/identity-providers/provider-step-up.js';
import { STEP_UP_REFUSALS_PER_SESSION, STEP_UP_REFUSAL_WINDOW_S } from '../src/auth/sessions/step-up-refusals.js';

/** A file's text with its line breaks and indentation folded into single spaces (YAML block text wraps anywhere). */
const text = (path: string) => readFileSync(join(PROJECT_ROOT, path), 'utf8').replace(/\s+/g, ' ');
/** Every "<number> live ..." the text says. */
const liveNumbers = (body: string) => [...body.matchAll(/(\d+) live (?:passkey |step-up )?challenges/g)].map((m) => Number(m[1]));

describe('the budgets of live passkey challenges say one number everywhere', () => {
  it('the contract of a passwordless sign-in says the per-address budget of the code, and no other', () => {
    const contract = text('openapi/paths/sessions_passkey_challenge.yaml');
    expect(liveNumbers(contract)).toEqual([MAX_LIVE_CHALLENGES_PER_ADDRESS]);
  });

  it("the contract of a passkey step-up says the per-session budget of the code, and no address's", () => {
    const contract = text('openapi/paths/sessions_current_step-up_passkey.yaml');
    expect(contract).toContain(`One session may hold ${MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION} live step-up challenges`);
    expect(liveNumbers(contract)).toEqual([MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION]);
  });

  it('docs/AUTH.md says both', () => {
    const docs = text('docs/AUTH.md');
    expect(docs).toContain(`may hold ${MAX_LIVE_CHALLENGES_PER_ADDRESS} live challenges of passwordless sign-ins and registrations`);
    expect(docs).toContain(`One session may hold ${MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION} live step-up challenges`);
  });

  it('the budget of refused step-ups per session says one number in the contract and the docs', () => {
    const said = `${STEP_UP_REFUSALS_PER_SESSION} refused step-ups in ${STEP_UP_REFUSAL_WINDOW_S / 60} minutes`;
    expect(text('openapi/paths/sessions_current_step-up.yaml')).toContain(said);
    expect(text('docs/AUTH.md')).toContain(said);
  });

  it("the contract of a step-up at the provider says the per-session budget of the code", () => {
    expect(text('openapi/paths/sessions_current_step-up_oidc.yaml')).toContain(`One session may have begun ${MAX_LIVE_STEP_UP_FLOWS_PER_SESSION} live step-ups at the provider`);
    expect(text('docs/IDENTITY.md')).toContain(`one session may have begun ${MAX_LIVE_STEP_UP_FLOWS_PER_SESSION} live step-ups at the provider`);
  });
});
