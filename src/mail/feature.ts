// The development mailbox (the sender is started by src/main.ts).
import { mailHandlers } from './handlers.js';

export const handlers = mailHandlers;
