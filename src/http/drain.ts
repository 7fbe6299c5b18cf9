// Whether this process is shutting down. One switch, read by the two places a drain shows:
// readiness answers 503 (a load balancer stops sending) and every answer carries
// `Connection: close` (a keep-alive client stops reusing its connection). main.ts turns it on.
export interface Drain {
  readonly draining: boolean;
  start(): void;
}

export function drainSwitch(): Drain {
  let draining = false;
  return {
    get draining() {
      return draining;
    },
    start() {
      draining = true;
    },
  };
}
