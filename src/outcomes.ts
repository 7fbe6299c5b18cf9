// What the domain counts, in its own words: how sign-ins, refreshes and API-key authentications
// end. The domain calls these; the composition root decides where they go (Prometheus counters in
// a served process: src/metrics/registry.ts; nowhere in tests and the command line). Nothing here
// knows HTTP or a metrics library. Each outcome is one of a fixed few: never a user, an e-mail or
// a key id.
export type SignInOutcome = 'succeeded' | 'failed' | 'throttled';
/** `refused`: a malformed, unknown or mismatched token, or a session ended or expired. */
export type RefreshOutcome = 'issued' | 'replayed' | 'reused' | 'refused';
/** `invalid`: malformed, unknown, revoked or retired; `ip_not_allowed`: from outside the key's allowlist. */
export type ApiKeyOutcome = 'accepted' | 'invalid' | 'expired' | 'creator_disabled' | 'ip_not_allowed';

/** How a message of the outbox of mail left it: sent, marked for the development mailbox, to be retried, given up. */
export type MailOutcome = 'sent' | 'dev_mailbox' | 'retried' | 'given_up';

export interface Outcomes {
  signIn(outcome: SignInOutcome): void;
  refresh(outcome: RefreshOutcome): void;
  apiKeyAuthentication(outcome: ApiKeyOutcome): void;
  /** `n` messages of the outbox of mail ended a sending attempt this way. */
  mail?(outcome: MailOutcome, n: number): void;
}

/** Counts nothing: where no one reads the counts. */
export const uncounted: Outcomes = {
  signIn() {},
  refresh() {},
  apiKeyAuthentication() {},
  mail() {},
};
