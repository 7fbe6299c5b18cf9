// The audit journal.
import { auditHandlers } from './handlers.js';

export const handlers = auditHandlers;
