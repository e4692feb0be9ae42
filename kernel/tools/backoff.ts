/**
 * The wait before retry number `failures` (1 for the first): doubling from `initialMs`, capped
 * at `maxMs`. One formula for every retry loop (MongoDB reconnects and watches, webhook deliveries).
 */
export function backoffDelay(failures: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(Math.max(failures, 1) - 1, 20));
}
