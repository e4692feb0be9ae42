import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** One file of the page, kept as it is sent: its bytes, their gzip, a strong ETag. */
export interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The UI library's ES modules, served by us under `vendor/` (no CDN: no request leaves the
 * machine). Found beside each package's CommonJS entry (the `.mjs` twin of what `require`
 * resolves): their `exports` hide the files themselves from `require.resolve`.
 */
const VENDOR: Record<string, string> = {
  'preact.mjs': 'preact',
  'hooks.mjs': 'preact/hooks',
  'htm.mjs': 'htm',
};

/**
 * The folder of the page's own files. They are plain ES modules checked by `tsc` (JSDoc
 * types) and never compiled, so they are read from the package's source tree, whether this
 * module runs from `plugins/` (tests) or bundled into `dist/` (a built server, kernel/bundle.js):
 * the first folder up from here that holds `plugins/control-panel/ui`.
 */
function uiFolder(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'plugins', 'control-panel', 'ui');
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('the control panel cannot find its page files (plugins/control-panel/ui)');
    dir = parent;
  }
}

function asset(name: string, body: Buffer): Asset {
  const type = TYPES[path.extname(name)] ?? 'application/octet-stream';
  return { type, body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
}

/**
 * Every file of the page by its path under the panel (`app.js`, `vendor/preact.mjs`), read
 * and compressed once at boot: a few files, about 70 KB. `index.html` is made by `page`.
 */
export function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const folder = uiFolder();
  for (const name of readdirSync(folder)) {
    if (!Object.hasOwn(TYPES, path.extname(name)) || name === 'index.html') continue;
    assets.set(name, asset(name, readFileSync(path.join(folder, name))));
  }
  const require = createRequire(import.meta.url);
  for (const [name, module] of Object.entries(VENDOR)) assets.set(`vendor/${name}`, asset(name, readFileSync(require.resolve(module).replace(/\.js$/, '.mjs'))));
  return assets;
}

/** The page itself: the import map for the UI library and what the app needs to know (where the API is). */
export function page(settings: { base: string; apiPrefix: string }): Asset {
  const config = JSON.stringify({ base: settings.base, api: settings.apiPrefix }).replace(/</g, '\\u003c');
  const imports = JSON.stringify({ imports: { preact: `${settings.base}/vendor/preact.mjs`, 'preact/hooks': `${settings.base}/vendor/hooks.mjs`, htm: `${settings.base}/vendor/htm.mjs` } });
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Streams control panel</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${settings.base}/style.css">
<script type="importmap">${imports}</script>
<script type="application/json" id="panel-config">${config}</script>
<script type="module" src="${settings.base}/app.js"></script>
</head>
<body>
<div id="app"></div>
</body>
</html>
`;
  return asset('index.html', Buffer.from(html));
}
