// Changing one's e-mail address, confirmed from the new one.
import type { Dependencies } from '../dependencies.js';
import { EmailChangeService } from './service.js';
import { emailChangeHandlers } from './handlers.js';

/** Built once, in src/composition.ts. */
export const services = (deps: Dependencies) => ({ emailChanges: new EmailChangeService(deps) });

export const handlers = emailChangeHandlers;
