// Tasks.
import type { Dependencies } from '../dependencies.js';
import { TaskService } from './service.js';
import { taskHandlers } from './handlers.js';

/** Built once, in src/services.ts. */
export const services = (deps: Dependencies) => ({ tasks: new TaskService(deps) });

export const handlers = taskHandlers;
