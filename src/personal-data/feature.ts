// A person’s data as one document.
import type { Dependencies } from '../dependencies.js';
import { PersonalDataService } from './service.js';
import { personalDataHandlers } from './handlers.js';

/** Built once, in src/services.ts. */
export const services = (deps: Dependencies) => ({ personalData: new PersonalDataService(deps) });

export const handlers = personalDataHandlers;
