import type { KernelConfig } from '../../kernel/index.js';
import type { HttpRequest } from '../http/index.js';

/** A Host header we are willing to echo into links: a name or [IPv6], optional port. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * The rightmost value of a forwarded header: the one our (trusted) proxy appended, read the
 * same way as the client address from `X-Forwarded-For`; anything left of it came from the
 * client and could be anything.
 */
function lastValue(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return header.slice(header.lastIndexOf(',') + 1).trim();
}

/**
 * Build the `{scheme}://{host}` in front of every link. `http.base_url` wins; else the
 * Host header (validated, so a forged Host cannot inject text into links); X-Forwarded-*
 * only when `http.trust_proxy` is on.
 */
export function createBaseUrl(config: KernelConfig, fallbackHost: () => string): (request: HttpRequest) => string {
  const fixed = config.http.base_url;
  if (fixed) {
    const trimmed = fixed.replace(/\/+$/, '');
    return () => trimmed;
  }
  const trust = config.http.trust_proxy;
  // The last valid Host and scheme seen, with their base: nearly every request names the same.
  let lastHost: string | undefined;
  let lastScheme = '';
  let lastBase = '';
  return (request) => {
    let scheme = 'http';
    let host = request.header('host');
    if (trust) {
      const proto = lastValue(request.header('x-forwarded-proto'))?.toLowerCase();
      if (proto === 'https' || proto === 'http') scheme = proto;
      const forwardedHost = lastValue(request.header('x-forwarded-host'));
      if (forwardedHost) host = forwardedHost;
    }
    if (host !== undefined && host === lastHost && scheme === lastScheme) return lastBase;
    if (host === undefined || !HOST.test(host)) return `${scheme}://${fallbackHost()}`;
    lastHost = host;
    lastScheme = scheme;
    lastBase = `${scheme}://${host}`;
    return lastBase;
  };
}
