import type { KernelConfig } from '../../../kernel/index.js';
import type { EntriesService } from '../../entries/index.js';
import type { FieldsService } from '../../fields/index.js';
import type { HttpReply, HttpRequest } from '../../http/index.js';
import type { StreamRegistry } from '../../streams/index.js';
import type { ApiRequest } from '../contracts.js';

/** What every endpoint needs, resolved once at boot. */
export interface EndpointContext {
  config: KernelConfig;
  registry: StreamRegistry;
  entries: EntriesService;
  fields: FieldsService;
  baseUrl(request: HttpRequest): string;
}

/** A reply at once (a cached GET) or later. */
export type EndpointHandler = (request: ApiRequest) => HttpReply | Promise<HttpReply>;

/** The URLs every envelope needs, computed once per request. */
export interface Urls {
  base: string;
  /** `{base}{prefix}/streams` */
  streams: string;
  self: string;
}

export function urlsOf(context: EndpointContext, request: ApiRequest): Urls {
  const base = context.baseUrl(request);
  return {
    base,
    streams: `${base}${request.api.prefix}/streams`,
    self: request.query.length > 0 ? `${base}${request.path}?${request.query}` : `${base}${request.path}`,
  };
}

export function segment(value: unknown): string {
  return encodeURIComponent(String(value));
}

export const json = JSON.stringify;
