// The worker thread of realtime-writer.js: one PATCH per message, timed here.
import { parentPort } from 'node:worker_threads';
import { request } from 'undici';

parentPort.on('message', async ({ url, body }) => {
  try {
    const sent = performance.now();
    const answer = await request(url, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body });
    await answer.body.dump();
    parentPort.postMessage({ ms: performance.now() - sent, status: answer.statusCode });
  } catch (error) {
    parentPort.postMessage({ error: error.message });
  }
});
