import { hash } from 'node:crypto';
import type { ErrorElement } from '../../kernel/index.js';
import type { HttpReply, HttpRequest } from '../http/index.js';

/**
 * The response envelope, assembled as a string from parts that are already JSON
 * (the entries layer caches each entry's JSON), so a GET never re-serializes an entry.
 */
export function envelope(links: string, meta: string, data: string, errors = '[]'): string {
  return `{"errors":${errors},"links":${links},"meta":${meta},"data":${data}}`;
}

export function errorEnvelope(links: string, errors: ErrorElement[]): string {
  return envelope(links, '{}', 'null', JSON.stringify(errors));
}

/** A strong validator of the exact body bytes (sha1 is plenty for change detection and fast). */
export function etagOf(body: string | Buffer): string {
  return `"${hash('sha1', body, 'base64url')}"`;
}

/** RFC 9110 If-None-Match (weak comparison): `*` or any listed tag equal to ours. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const ours = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const part of header.split(',')) {
    let tag = part.trim();
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag === ours) return true;
  }
  return false;
}

/** A 200 with an ETag, or a bodiless 304 when the client already has this representation. */
export function conditionalReply(request: HttpRequest, body: string | Buffer, headers?: Array<[string, string]>, etag = etagOf(body)): HttpReply {
  if (hasCurrent(request, etag)) return { status: 304, headers: [['ETag', etag]] };
  const list: Array<[string, string]> = headers ? [...headers, ['ETag', etag]] : [['ETag', etag]];
  return { status: 200, headers: list, body };
}

/**
 * `conditionalReply` of a 200 made before (the reply cache's): that very answer, shared and
 * frozen (a middleware that changes an answer builds a new one), or the 304.
 */
export function keptReply(request: HttpRequest, reply: Readonly<HttpReply>, etag: string): HttpReply {
  return hasCurrent(request, etag) ? { status: 304, headers: [['ETag', etag]] } : reply;
}

/** A conditional GET or HEAD whose `If-None-Match` names `etag`: the client has this representation. */
function hasCurrent(request: HttpRequest, etag: string): boolean {
  return (request.method === 'GET' || request.method === 'HEAD') && matchesIfNoneMatch(request.header('if-none-match'), etag);
}
