import { API } from '../../plugins/api/index.js';
import { FIELDS } from '../../plugins/fields/index.js';
import { buildDocument } from '../../plugins/openapi/document.js';
import { STREAM_REGISTRY } from '../../plugins/streams/index.js';
import type { TestApp } from '../helpers/app.js';
import { responseValidator } from './helpers.js';

/** Answers without a body to check. */
const UNCHECKED_STATUSES = new Set([204, 304]);

/**
 * Wrap an app so that every JSON answer under `/api/` is validated against the document the
 * app serves at `/api/openapi.json` (built in-process from the same registry, so the check
 * itself sends no request through middleware that counts or records them). A mismatch throws
 * in the test that made the request, whichever side is wrong.
 */
export function contractChecked(app: TestApp): TestApp {
  const original = app.request.bind(app);
  const config = app.kernel.config;
  const declared = config.api.interfaces.find((i) => `/${(i.prefix ?? config.api.prefix).replace(/^\/+|\/+$/g, '')}` === '/api');
  if (config.api.interfaces.length > 0 && declared === undefined) return app; // no interface at /api
  const view = {
    name: declared?.name ?? 'api',
    prefix: '/api',
    resources: declared?.resources ?? ['streams', 'entries'],
    middleware: [...config.api.middleware, ...(declared?.middleware ?? [])],
  };
  // One validator per state of the registry (definitions are replaced, never mutated, on change).
  const ids = new WeakMap<object, number>();
  let counter = 0;
  let cached: { key: string; check: ReturnType<typeof responseValidator> } | undefined;
  const validatorNow = (): ReturnType<typeof responseValidator> => {
    const registry = app.kernel.get(STREAM_REGISTRY);
    const key = registry
      .list()
      .map((d) => {
        let id = ids.get(d);
        if (id === undefined) ids.set(d, (id = ++counter));
        return id;
      })
      .join(',');
    if (cached?.key !== key) {
      const extras = app.kernel.get(API).extraEndpoints();
      const doc = buildDocument({ config, registry, fields: app.kernel.get(FIELDS), view, baseUrl: app.url, version: '0.0.0', extras });
      cached = { key, check: responseValidator(doc as never) };
    }
    return cached.check;
  };
  const wrapped: TestApp['request'] = async (method, target, body, headers) => {
    const res = await original(method, target, body, headers);
    const path = target.split('?')[0]!;
    if (!path.startsWith('/api/') || method === 'HEAD' || method === 'OPTIONS' || UNCHECKED_STATUSES.has(res.status) || res.json === undefined) return res;
    if (path === '/api/openapi.json' || path.startsWith('/api/docs')) return res;
    const verdict = validatorNow()(method, path, res.status, res.json);
    if (!verdict.ok) throw new Error(`contract: ${method} ${target} -> ${res.status} does not match /api/openapi.json: ${verdict.why}\n${res.text.slice(0, 300)}`);
    return res;
  };
  return Object.assign(app, { request: wrapped });
}
