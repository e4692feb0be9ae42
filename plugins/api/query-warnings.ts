import { nearestName } from '../streams/index.js';

/**
 * The query parameters each read endpoint takes (by their name before any `[`): anything else
 * is reported in `meta.warnings`, so `wher[year]=1970` or `per_pge=5` does not silently answer
 * the unfiltered first page. The parameters keep their meaning; nothing else changes.
 */
const LIST = ['page', 'per_page', 'where', 'constraint', 'orderBy', 'order_by'];
const KNOWN: Record<string, readonly string[]> = {
  'entries.index': [...LIST, 'with'],
  'entries.show': ['with'],
  'entries.query': ['page', 'per_page'],
  'streams.index': LIST,
  'realtime.changes': ['since', 'per_page', 'where', 'constraint'],
};

/** At most this many parameters are reported (a hostile query could name thousands). */
const MAX_REPORTED = 10;

/** Warnings for the parameters of `query` that `endpoint` does not take; undefined when all are known (or it is not a read endpoint). */
export function queryWarnings(endpoint: string | null, query: string): string[] | undefined {
  if (query === '' || endpoint === null) return undefined;
  const known = KNOWN[endpoint];
  if (known === undefined) return undefined;
  let warnings: string[] | undefined;
  const seen = new Set<string>();
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const raw = pair.slice(0, pair.indexOf('=') === -1 ? pair.length : pair.indexOf('='));
    let name: string;
    try {
      name = decodeURIComponent(raw.replace(/\+/g, ' '));
    } catch {
      name = raw;
    }
    const base = name.includes('[') ? name.slice(0, name.indexOf('[')) : name;
    if (known.includes(base) || seen.has(base)) continue;
    seen.add(base);
    warnings ??= [];
    if (warnings.length === MAX_REPORTED) break;
    const near = nearestName(base, known);
    const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
    warnings.push(`Unknown query parameter [${shown}]${near === undefined ? '' : ` (did you mean ${near}?)`}: it was ignored.`);
  }
  return warnings;
}

/**
 * A success envelope with `meta.warnings` added: the envelope's own JSON, so the first
 * `"meta":{` is its meta (a string inside cannot hold an unescaped quote); an answer that is
 * not a success envelope is returned as it is.
 */
export function withWarnings(body: string | Uint8Array | undefined, warnings: string[]): string | Uint8Array | undefined {
  if (body === undefined) return body;
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  if (!text.startsWith('{"errors":[]')) return body;
  const at = text.indexOf('"meta":{');
  if (at === -1) return body;
  const insert = `"warnings":${JSON.stringify(warnings)}`;
  const after = at + '"meta":{'.length;
  return `${text.slice(0, after)}${insert}${text[after] === '}' ? '' : ','}${text.slice(after)}`;
}
