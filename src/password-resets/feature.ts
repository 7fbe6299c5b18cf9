// Password recovery by e-mail.
import type { Dependencies } from '../dependencies.js';
import { PasswordResetService } from './service.js';
import { passwordResetHandlers } from './handlers.js';

/** Built once, in src/services.ts. */
export const services = (deps: Dependencies) => ({ passwordResets: new PasswordResetService(deps) });

export const handlers = passwordResetHandlers;
