// The application the realtime bench serves: the 1,000-entry `items` stream of the other
// scenarios, plus `notes`, a stream whose `body` takes the 1 MB changes (items' title is
// capped at 200 characters), and the config that lets 10,000 subscribers in.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateFilebaseApp, productConfig } from './dataset.js';

export const LARGE_STREAM = 'notes';

/**
 * ===== The bench server's settings (edit here) =====
 * The product caps WebSocket subscriptions and SSE streams per client and in total (issue #26):
 * every bench subscriber comes from 127.0.0.1, so those caps must be raised above 10,000 here,
 * under the key names the product uses (`realtime.*`, docs/configuration.md). A key the product
 * does not know stops its boot (config sections refuse unknown keys), so only keys of the
 * product being measured belong here. A subscriber refused by a cap fails the bench with the
 * server's reason, naming this object.
 */
export const REALTIME_BENCH_CONFIG = {
  realtime: {
    // Every bench client comes from one address: the per-client caps (32 sockets by default) and
    // the totals are raised so 10,000 subscribers on 10,000 sockets are all admitted.
    limits: {
      sockets_per_client: 20_000,
      sockets_total: 20_000,
      subscriptions_per_client: 20_000,
      subscriptions_total: 40_000,
      sse_per_client: 20_000,
      sse_total: 20_000,
      registry_bytes: 64 * 1024 * 1024,
    },
  },
  // A 1 MB change is a PATCH body of a little over 1 MB (the default cap is 1 MiB).
  http: { host: '127.0.0.1', max_body: 4 * 1024 * 1024 },
};

/** Generate (or reuse) the app folder; its config is rewritten every run from REALTIME_BENCH_CONFIG. */
export async function generateRealtimeApp(dir) {
  const app = await generateFilebaseApp(dir, 1000, { peer: false });
  const streams = path.join(dir, 'streams');
  await mkdir(path.join(streams, 'data', LARGE_STREAM), { recursive: true });
  const definition = { id: LARGE_STREAM, name: 'Notes', config: { source: { type: 'filebase', format: 'json' } }, fields: { id: { type: 'integer' }, body: { type: 'string' } } };
  await writeFile(path.join(streams, `${LARGE_STREAM}.json`), JSON.stringify(definition, null, 2));
  await writeFile(path.join(streams, 'data', LARGE_STREAM, '1.json'), JSON.stringify({ id: 1, body: '' }));
  const config = productConfig(REALTIME_BENCH_CONFIG);
  await writeFile(app.config, JSON.stringify(config, null, 2));
  return app;
}
