// Time, injectable: token expiry and throttling windows are tested with a controllable clock.
// Queries take `now` from here as a parameter instead of calling SQL now(), for the same reason.
import { readFileSync } from 'node:fs';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that moves only when told to. */
export class ManualClock implements Clock {
  constructor(private current = new Date('2026-01-01T00:00:00.000Z')) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
  set(date: Date): void {
    this.current = new Date(date.getTime());
  }
}

/**
 * Tests of several server processes (NODE_ENV=test, TEST_CLOCK_FILE): the time written in the
 * file (an ISO instant) when there is one, the system's otherwise, so that a test can hold every
 * process inside one rate-limit window or move them all to the next.
 */
export function fileClock(path: string): Clock {
  return {
    now() {
      let text = '';
      try {
        text = readFileSync(path, 'utf8').trim();
      } catch {
        // No file yet: the system's time.
      }
      return text === '' ? new Date() : new Date(text);
    },
  };
}
