import { defineSettings } from '../../kernel/index.js';

/** The `realtime` section: change history, Server-Sent Events, webhooks (docs/realtime.md). */
export interface RealtimeSettings {
  history: { count: number; max_age_seconds: number };
  heartbeat_seconds: number;
  webhooks: Array<{ url: string; streams?: string[]; events?: Array<'created' | 'updated' | 'deleted'>; secret?: string }>;
  webhook_timeout_ms: number;
  webhook_max_attempts: number;
  webhook_retry_base_ms: number;
  stream_webhook_hosts: string[];
}

declare module '../../kernel/config-schema.js' {
  interface ConfigSections {
    realtime: RealtimeSettings;
  }
}

export const realtimeSettings = defineSettings({
  key: 'realtime',
  schema: {
    type: 'object',
    additionalProperties: false,
    default: {},
    properties: {
      history: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          count: { type: 'integer', minimum: 1, maximum: 1000000, default: 1000 },
          max_age_seconds: { type: 'integer', minimum: 1, default: 86400 },
        },
      },
      heartbeat_seconds: { type: 'integer', minimum: 1, maximum: 3600, default: 15 },
      webhooks: {
        type: 'array',
        default: [],
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          properties: {
            url: { type: 'string', pattern: '^https?://' },
            streams: { type: 'array', items: { type: 'string', minLength: 1 } },
            events: { type: 'array', items: { enum: ['created', 'updated', 'deleted'] }, uniqueItems: true },
            secret: { type: 'string', minLength: 1 },
          },
        },
      },
      webhook_timeout_ms: { type: 'integer', minimum: 100, default: 10000 },
      webhook_max_attempts: { type: 'integer', minimum: 1, maximum: 100, default: 15 },
      webhook_retry_base_ms: { type: 'integer', minimum: 10, default: 1000 },
      /** Hosts a stream definition's own `webhooks` may post to (none by default: only the operator's config sends webhooks). */
      stream_webhook_hosts: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
    },
  },
});
