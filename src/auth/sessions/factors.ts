// The second factors that signing in and stepping up check, built once by the composition root
// (src/services.ts) and handed to the services of this folder.
import type { SecondFactorService } from '../second-factors/service.js';
import type { PasskeyService } from '../second-factors/passkeys.js';

export interface SignInFactors {
  secondFactors: SecondFactorService;
  passkeys: PasskeyService;
}
