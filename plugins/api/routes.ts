import type { EndpointName, ResourceName } from './contracts.js';

export interface EndpointRoute {
  name: EndpointName;
  method: string;
  /** Path relative to the interface prefix. */
  pattern: string;
  resource: ResourceName;
  /** Counts as a write for middleware (readonly...). */
  write: boolean;
}

/** Every endpoint of the spec. The query endpoint is a POST that only reads, but counts as a write. */
export const ENDPOINT_ROUTES: EndpointRoute[] = [
  { name: 'streams.index', method: 'GET', pattern: '/streams', resource: 'streams', write: false },
  { name: 'streams.store', method: 'POST', pattern: '/streams', resource: 'streams', write: true },
  { name: 'streams.show', method: 'GET', pattern: '/streams/:stream', resource: 'streams', write: false },
  { name: 'streams.update', method: 'PUT', pattern: '/streams/:stream', resource: 'streams', write: true },
  { name: 'streams.patch', method: 'PATCH', pattern: '/streams/:stream', resource: 'streams', write: true },
  { name: 'streams.delete', method: 'DELETE', pattern: '/streams/:stream', resource: 'streams', write: true },
  { name: 'entries.index', method: 'GET', pattern: '/streams/:stream/entries', resource: 'entries', write: false },
  { name: 'entries.store', method: 'POST', pattern: '/streams/:stream/entries', resource: 'entries', write: true },
  { name: 'entries.show', method: 'GET', pattern: '/streams/:stream/entries/:entry', resource: 'entries', write: false },
  { name: 'entries.update', method: 'PUT', pattern: '/streams/:stream/entries/:entry', resource: 'entries', write: true },
  { name: 'entries.patch', method: 'PATCH', pattern: '/streams/:stream/entries/:entry', resource: 'entries', write: true },
  { name: 'entries.delete', method: 'DELETE', pattern: '/streams/:stream/entries/:entry', resource: 'entries', write: true },
  { name: 'entries.query', method: 'POST', pattern: '/streams/:stream/query', resource: 'entries', write: true },
];
