import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { definePlugin, type KernelConfig } from '../../kernel/index.js';
import { API, conditionalReply, type ApiRequest } from '../api/index.js';
import { FIELDS } from '../fields/index.js';
import type { HttpReply } from '../http/index.js';
import { STREAM_REGISTRY } from '../streams/index.js';
import { docsAsset, docsPage } from './docs-page.js';
import { buildDocument, type InterfaceView } from './document.js';

/** Documents kept (one per interface and base URL), dropped whenever a definition changes. */
const MAX_CACHED = 16;

/**
 * The openapi plugin: `GET <prefix>/openapi.json`, a live OpenAPI 3.1 document of the
 * interface serving the request, and `GET <prefix>/docs`, an HTML reference page of it.
 * Both are API endpoints: the interface's middleware and the gate apply as to any route.
 */
export const openapiPlugin = definePlugin({
  name: 'openapi',
  requires: ['api', 'streams', 'fields'],
  register({ use, config, hooks }) {
    const api = use(API);
    const registry = use(STREAM_REGISTRY);
    const fields = use(FIELDS);
    const cache = new Map<string, string>();
    hooks.on('definition.changed', () => cache.clear());
    const version = packageVersion();

    const document = async (request: ApiRequest): Promise<HttpReply> => {
      const base = api.baseUrl(request);
      const key = `${request.api.interface}\u0000${base}`;
      let body = cache.get(key);
      if (body === undefined) {
        const built = buildDocument({
          config,
          registry,
          fields,
          view: interfaceView(config, request),
          baseUrl: base,
          version,
          extras: api.extraEndpoints(),
        });
        body = JSON.stringify(built);
        if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
        cache.set(key, body);
      }
      return conditionalReply(request, body);
    };
    api.addEndpoint({ name: 'openapi.document', method: 'GET', pattern: '/openapi.json', handler: document });
    api.addEndpoint({
      name: 'openapi.docs',
      method: 'GET',
      pattern: '/docs',
      handler: async (request) => ({ status: 200, type: 'text/html; charset=utf-8', body: docsPage(`${request.api.prefix}/openapi.json`, `${request.api.prefix}/docs`) }),
    });
    api.addEndpoint({
      name: 'openapi.docs.asset',
      method: 'GET',
      pattern: '/docs/:asset',
      handler: async (request) => {
        const asset = docsAsset(request.params.asset ?? '');
        if (!asset) return api.errorReply(request, 404, 'Not Found');
        return { status: 200, type: asset.type, body: asset.body, headers: [['Cache-Control', 'public, max-age=86400']] };
      },
    });
  },
});

/** The interface of a request as the document describes it: prefix, resources, middleware (group first). */
function interfaceView(config: KernelConfig, request: ApiRequest): InterfaceView {
  const declared = config.api.interfaces.find((i) => i.name === request.api.interface);
  return {
    name: request.api.interface,
    prefix: request.api.prefix,
    resources: request.api.resources,
    middleware: [...config.api.middleware, ...(declared?.middleware ?? [])],
  };
}

function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'streams-kernel') return pkg.version ?? '0.0.0';
    }
    dir = path.dirname(dir);
  }
  return '0.0.0';
}
