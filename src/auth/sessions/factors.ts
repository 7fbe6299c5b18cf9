// The second factors that signing in and stepping up check, built once by the composition root
// (src/services.ts) and handed to the services of this folder.
import type { SecondFactorChecks } from '../second-factors/checks.js';
import type { PasskeyAssertions } from '../second-factors/passkey-assertions.js';

export interface SignInFactors {
  secondFactors: SecondFactorChecks;
  passkeys: PasskeyAssertions;
}
