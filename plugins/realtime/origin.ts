import { AppError } from '../../kernel/index.js';
import type { ApiRequest } from '../api/index.js';

/**
 * Browsers send `Origin` on a WebSocket upgrade and on a cross-origin EventSource, but a
 * WebSocket is not covered by CORS: without this check any web page a user visits could
 * open a socket to an open API (or one that trusts cookies) and read every change. So an
 * upgrade or an event stream from a browser origin is served only when that origin is the
 * server's own (the Host the request was sent to, or `http.base_url`) or one that
 * `api.cors.origins` lets read the API (`*`: any). Requests without `Origin` (curl, servers,
 * native apps) are not a browser's and pass; their access is the gate's and the middleware's.
 */
export function originCheck(corsOrigins: readonly string[], baseUrl: (request: ApiRequest) => string): (request: ApiRequest) => void {
  const any = corsOrigins.includes('*');
  const allowed = new Set(corsOrigins.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  return (request) => {
    const origin = request.header('origin');
    if (origin === undefined || any) return;
    const wanted = origin.toLowerCase();
    if (allowed.has(wanted)) return;
    const host = request.header('host')?.toLowerCase();
    if (host !== undefined && (wanted === `http://${host}` || wanted === `https://${host}`)) return;
    if (wanted === originOf(baseUrl(request))) return;
    throw new AppError(403, `The origin [${origin.slice(0, 200)}] may not open realtime connections here: it is not this server's own and not in api.cors.origins.`);
  };
}

/** `scheme://host[:port]` of a URL, lower case. */
function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin.toLowerCase();
  } catch {
    return undefined;
  }
}
