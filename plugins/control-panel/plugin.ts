import { createHash } from 'node:crypto';
import { definePlugin } from '../../kernel/index.js';
import { API_MIDDLEWARE, runMiddleware, type Middleware } from '../api/index.js';
import { HTTP_SERVER, type HttpReply, type HttpRequest } from '../http/index.js';
import { loadAssets, page, type Asset } from './assets.js';
import { controlPanelSettings } from './settings.js';

/**
 * The control panel (issue #31): a web page to browse and edit every stream, served at
 * `control_panel.path`. It is a client of the public API like any other (JSON, OpenAPI,
 * the change feed), so the API's interface middleware, gate and access rules apply to all
 * it shows and writes; the page's own files hold no data, and run only the middleware of
 * `control_panel.middleware` (an IP allow-list, a proxy's auth...). docs/control-panel.md.
 */
export const controlPanelPlugin = definePlugin(() => ({
  name: 'control-panel',
  settings: controlPanelSettings,
  requires: ['http', 'api'],
  provides: [],
  uses: [HTTP_SERVER, API_MIDDLEWARE],
  boot({ config, use }) {
    const settings = config.control_panel;
    if (!settings.enabled) return;
    const server = use(HTTP_SERVER);
    const base = settings.path.replace(/\/+$/, '');
    const apiPrefix = (settings.api_prefix ?? config.api.prefix).replace(/^\/+|\/+$/g, '');
    const assets = loadAssets();
    const index = page({ base, apiPrefix: apiPrefix === '' ? '' : `/${apiPrefix}` });
    const headers = securityHeaders(index);
    const registry = use(API_MIDDLEWARE);
    const chain: Middleware[] = settings.middleware.map((spec) => registry.create(spec));
    const serve = (request: HttpRequest): HttpReply => {
      const rest = request.path.slice(base.length).replace(/^\/+/, '');
      const asset = rest === '' ? index : assets.get(rest);
      if (asset === undefined) return { status: 404, type: 'text/plain; charset=utf-8', body: 'Not Found\n' };
      return reply(request, asset, headers);
    };
    const handler = (request: HttpRequest): HttpReply | Promise<HttpReply> => {
      if (chain.length === 0) return serve(request);
      const api = { interface: 'control-panel', prefix: base, endpoint: 'control-panel.page', resource: null, write: false, allow: ['GET', 'HEAD'], relativePath: request.path.slice(1), resources: [] as const };
      return runMiddleware(request, api, chain, () => serve(request));
    };
    server.route('GET', base, handler);
    server.route('GET', `${base}/*`, handler);
    // Named in the boot banner (the `listening` line's `links.control_panel`).
    server.announce('control_panel', `${base}/`);
  },
}));

/** The page's files never change while it runs: revalidated by ETag, sent gzipped when the browser takes it. */
function reply(request: HttpRequest, asset: Asset, headers: Array<[string, string]>): HttpReply {
  const common: Array<[string, string]> = [['ETag', asset.etag], ['Cache-Control', 'no-cache'], ['Vary', 'Accept-Encoding'], ...headers];
  if (request.header('if-none-match') === asset.etag) return { status: 304, headers: common };
  if (/\bgzip\b/.test(request.header('accept-encoding') ?? '')) {
    return { status: 200, type: asset.type, headers: [...common, ['Content-Encoding', 'gzip']], body: asset.gzip };
  }
  return { status: 200, type: asset.type, headers: common, body: asset.body };
}

/**
 * Only our own scripts run (the inline import map by its hash), only our own origin is
 * fetched from, and no other site may frame the page (a click-jacked Delete).
 */
function securityHeaders(index: Asset): Array<[string, string]> {
  const html = index.body.toString('utf8');
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)![1]!;
  const hash = createHash('sha256').update(importMap).digest('base64');
  return [
    ['Content-Security-Policy', `default-src 'self'; script-src 'self' 'sha256-${hash}'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`],
    ['X-Content-Type-Options', 'nosniff'],
    ['Referrer-Policy', 'no-referrer'],
    ['X-Frame-Options', 'DENY'],
  ];
}
