// Erasing a person.
import type { Dependencies } from '../dependencies.js';
import { ErasureService } from './service.js';
import { erasureHandlers } from './handlers.js';

/** Built once, in src/services.ts. */
export const services = (deps: Dependencies) => ({ erasure: new ErasureService(deps) });

export const handlers = erasureHandlers;
