import { defineSettings } from '../../kernel/index.js';
import type { CompressionSettings } from './compression.js';

/** The `http` section: the transport (docs/configuration.md, "http"). */
export interface HttpSettings {
  host: string;
  port: number;
  max_body: number;
  stream_buffer_bytes: number;
  base_url: string | null;
  trust_proxy: boolean;
  body_timeout_ms: number;
  shutdown_timeout_ms: number;
  /** How long a drain keeps answering requests on open keep-alive connections (with Connection: close) before closing them. */
  shutdown_grace_ms: number;
  /** `auto`: native uWebSockets.js when a binary loads, else node:http; `uws`: native or exit 1; `node`: node:http. */
  transport: 'auto' | 'uws' | 'node';
  /** When `port` is taken, listen on a free port instead (the url line says which). */
  port_fallback: boolean;
  /** Longest path + query string in characters; a longer request line is answered 414. */
  max_url: number;
  compression: CompressionSettings;
}

declare module '../../kernel/config-schema.js' {
  interface ConfigSections {
    http: HttpSettings;
  }
}

export const httpSettings = defineSettings({
  key: 'http',
  schema: {
    type: 'object',
    additionalProperties: false,
    default: {},
    properties: {
      host: { type: 'string', minLength: 1, default: '127.0.0.1' },
      port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
      max_body: { type: 'integer', minimum: 1, default: 1048576 },
      /** A streamed response (SSE) or WebSocket whose client does not read is dropped past this many queued bytes. */
      stream_buffer_bytes: { type: 'integer', minimum: 1024, default: 1048576 },
      base_url: { type: ['string', 'null'], pattern: '^https?://', default: null },
      trust_proxy: { type: 'boolean', default: false },
      body_timeout_ms: { type: 'integer', minimum: 1, default: 10000 },
      shutdown_timeout_ms: { type: 'integer', minimum: 0, default: 10000 },
      shutdown_grace_ms: { type: 'integer', minimum: 0, default: 1000 },
      transport: { enum: ['auto', 'uws', 'node'], default: 'auto' },
      port_fallback: { type: 'boolean', default: false },
      max_url: { type: 'integer', minimum: 256, default: 8192 },
      compression: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          enabled: { type: 'boolean', default: true },
          threshold: { type: 'integer', minimum: 0, default: 1024 },
          brotli_quality: { type: 'integer', minimum: 0, maximum: 11, default: 4 },
          gzip_level: { type: 'integer', minimum: 1, maximum: 9, default: 6 },
        },
      },
    },
  },
});
