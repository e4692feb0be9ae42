import type { Logger } from '../logger.js';

/**
 * Work a plugin starts outside a request (a preload, a watcher's callback, a timer, a retry):
 * run it now and never let it reject unhandled. A failure is logged on `logger` (a plugin's
 * context logger binds the plugin's name) with `task` saying what it was, and the node keeps
 * serving. Answers a promise that always resolves, once the work is over (await it in tests
 * or at shutdown; never needed otherwise).
 *
 * `context.background(task, work)` is this with the plugin's own logger.
 */
export function inBackground(logger: Logger, task: string, work: () => unknown): Promise<void> {
  let running: Promise<unknown>;
  try {
    running = Promise.resolve(work());
  } catch (error) {
    running = Promise.reject(error);
  }
  return running.then(
    () => undefined,
    (error: unknown) => {
      logger.error({ err: error, task }, `background work failed: ${task} (the node keeps serving)`);
    },
  );
}
