import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { definePlugin, type KernelConfig } from '../../kernel/index.js';
import { accessOf, API, conditionalReply, type ApiRequest } from '../api/index.js';
import { FIELDS } from '../fields/index.js';
import { HTTP_SERVER, type HttpReply } from '../http/index.js';
import { STREAM_REGISTRY } from '../streams/index.js';
import { docsAsset, docsPage } from './docs-page.js';
import { DocumentCache } from './document-cache.js';
import { buildDocument, type CallerView, type InterfaceView } from './document.js';

/**
 * The openapi plugin: `GET <prefix>/openapi.json`, a live OpenAPI 3.1 document of the
 * interface serving the request, and `GET <prefix>/docs`, an HTML reference page of it.
 * Both are API endpoints: the interface's middleware and the gate apply as to any route.
 */
export const openapiPlugin = definePlugin({
  name: 'openapi',
  requires: ['api', 'streams', 'fields'],
  provides: [],
  uses: [API, STREAM_REGISTRY, FIELDS, HTTP_SERVER],
  register({ use, config, hooks }) {
    const api = use(API);
    const registry = use(STREAM_REGISTRY);
    const fields = use(FIELDS);
    // Templates are also checked against the definitions they were built from; the hook frees them early.
    const cache = new DocumentCache();
    hooks.on('definition.changed', () => cache.clear());
    const version = packageVersion();

    const document = async (request: ApiRequest): Promise<HttpReply> => {
      const access = callerView(request);
      const build = (serverUrl: string): object =>
        buildDocument({ config, registry, fields, view: interfaceView(config, request), baseUrl: serverUrl, version, extras: api.extraEndpoints(), access });
      // Under access rules the document depends on the caller's roles too (issue #28): one per interface and role set.
      const key = access === undefined ? request.api.interface : `${request.api.interface}\u0000${accessOf(request)!.rolesKey}`;
      const { body, etag } = cache.get(key, api.baseUrl(request), registry.list(), build);
      return conditionalReply(request, body, undefined, etag);
    };
    api.addEndpoint({ name: 'openapi.document', method: 'GET', pattern: '/openapi.json', handler: document });
    use(HTTP_SERVER).announce('docs', `/${config.api.prefix.replace(/^\/+|\/+$/g, '')}/docs`);
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

/** What the document shows of a caller (issue #28): its actions and the fields hidden from it; undefined without an access plugin. */
function callerView(request: ApiRequest): CallerView | undefined {
  const access = accessOf(request);
  if (access === undefined) return undefined;
  return {
    admin: access.admin,
    can: (definition, action) => access.can(definition, action),
    hidden: (definition) => {
      const seen = new Set<string>();
      for (const action of ['view', 'list'] as const) for (const name of access.viewer(definition, action)?.hidden ?? []) seen.add(name);
      return seen;
    },
  };
}

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
