import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The swagger-ui-dist files the page loads, served by us: no request leaves the machine. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

let folder: string | undefined;
const cache = new Map<string, Buffer>();

function assetFolder(): string {
  folder ??= path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return folder;
}

/** One of the page's assets (read once, kept: four files, about 1.5 MB), or undefined for any other name. */
export function docsAsset(name: string): { body: Buffer; type: string } | undefined {
  const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (type === undefined) return undefined;
  let body = cache.get(name);
  if (body === undefined) {
    body = readFileSync(path.join(assetFolder(), name));
    cache.set(name, body);
  }
  return { body, type };
}

/**
 * The reference page: Swagger UI on `./openapi.json` (relative, so it works under any
 * interface prefix and behind a proxy). `validatorUrl: null` keeps Swagger UI from sending
 * the document to its public validator.
 */
export function docsPage(documentUrl: string, assetsUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Streams Kernel API reference</title>
<link rel="stylesheet" href="${assetsUrl}/swagger-ui.css">
<link rel="icon" type="image/png" href="${assetsUrl}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${assetsUrl}/swagger-ui-bundle.js"></script>
<script src="${assetsUrl}/swagger-ui-standalone-preset.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: ${JSON.stringify(documentUrl)}, dom_id: '#swagger-ui', validatorUrl: null, deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'BaseLayout' });
</script>
</body>
</html>
`;
}
