// Erasing a person.
import type { Dependencies } from '../dependencies.js';
import { erasureService } from './service.js';
import { erasureHandlers } from './handlers.js';

/** Built once, in src/services.ts. */
export const services = (deps: Dependencies) => ({ erasure: erasureService(deps) });

export const handlers = erasureHandlers;
