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
/** The same as sets, for the check every request with a query string makes. */
const KNOWN_SETS = new Map(Object.entries(KNOWN).map(([endpoint, names]) => [endpoint, new Set(names)]));

/** At most this many parameters are reported (a hostile query could name thousands). */
const MAX_REPORTED = 10;

/** Warnings for the parameters of `query` that `endpoint` does not take; undefined when all are known (or it is not a read endpoint). */
export function queryWarnings(endpoint: string | null, query: string): string[] | undefined {
  if (query === '' || endpoint === null) return undefined;
  const known = KNOWN_SETS.get(endpoint);
  if (known === undefined) return undefined;
  let warnings: string[] | undefined;
  let seen: Set<string> | undefined;
  // Walked in place: the usual query (`per_page=20&page=3`, `where[year]=...`) allocates one short
  // name per parameter and nothing else; decoding is for names that are not known as sent.
  for (let start = 0; start < query.length; ) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    let nameEnd = end;
    const eq = query.indexOf('=', start);
    if (eq !== -1 && eq < nameEnd) nameEnd = eq;
    const bracket = query.indexOf('[', start);
    if (bracket !== -1 && bracket < nameEnd) nameEnd = bracket;
    const raw = query.slice(start, nameEnd);
    const at = start;
    start = end + 1;
    if (raw === '' || known.has(raw)) continue;
    let name: string;
    try {
      name = decodeURIComponent(query.slice(at, eq !== -1 && eq < end ? eq : end).replace(/\+/g, ' '));
    } catch {
      name = query.slice(at, end);
    }
    const base = name.includes('[') ? name.slice(0, name.indexOf('[')) : name;
    if (known.has(base) || seen?.has(base)) continue;
    (seen ??= new Set()).add(base);
    warnings ??= [];
    if (warnings.length === MAX_REPORTED) break;
    const near = nearestName(base, KNOWN[endpoint]!);
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
