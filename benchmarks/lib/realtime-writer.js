// The writer of the 1 MB changes, on a worker thread of its own: the subscribers' event loop
// (this process's main thread) is busy reading 1 MB per subscriber and would otherwise delay
// the PATCH's answer being noticed, timing the harness instead of the product.
import { Worker } from 'node:worker_threads';

/** A PATCH sender on its own thread: `patch(url, body)` resolves with the answer's time in ms. */
export function startWriter() {
  const worker = new Worker(new URL('./realtime-writer-thread.js', import.meta.url));
  return {
    patch(url, body) {
      return new Promise((resolve, reject) => {
        worker.once('message', (m) => {
          if (m.error) reject(new Error(m.error));
          else if (m.status !== 200) reject(new Error(`PATCH ${url} answered ${m.status}`));
          else resolve(m.ms);
        });
        worker.postMessage({ url, body });
      });
    },
    stop: () => worker.terminate(),
  };
}
