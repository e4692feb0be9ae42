import { defineSettings } from '../../kernel/index.js';
import type { RealtimeLimits } from './admission.js';

const MiB = 1024 * 1024;

/** The `realtime` section: change history, Server-Sent Events, webhooks (docs/realtime.md). */
export interface RealtimeSettings {
  history: { count: number; max_age_seconds: number; max_bytes: number; memory_bytes: number; max_change_bytes: number };
  heartbeat_seconds: number;
  limits: RealtimeLimits;
  webhooks: Array<{ url: string; streams?: string[]; events?: Array<'created' | 'updated' | 'deleted'>; secret?: string }>;
  webhook_timeout_ms: number;
  webhook_max_attempts: number;
  webhook_retry_base_ms: number;
  webhook_max_age_seconds: number;
  outbox_bytes: number;
  dead_letter_bytes: number;
  stream_webhook_hosts: string[];
  stream_webhook_secrets: Record<string, string>;
  cluster: { outbox_collection: string; lease_ms: number; poll_ms: number; keep_done_seconds: number };
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
          max_bytes: { type: 'integer', minimum: 1024 * 1024, default: 64 * MiB },
          memory_bytes: { type: 'integer', minimum: 64 * 1024, default: 8 * MiB },
          max_change_bytes: { type: 'integer', minimum: 1024, maximum: 16 * MiB, default: 128 * 1024 },
        },
      },
      heartbeat_seconds: { type: 'integer', minimum: 1, maximum: 3600, default: 15 },
      limits: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          sse_per_client: { type: 'integer', minimum: 1, default: 32 },
          sse_total: { type: 'integer', minimum: 1, default: 1000 },
          sockets_per_client: { type: 'integer', minimum: 1, default: 32 },
          sockets_total: { type: 'integer', minimum: 1, default: 1000 },
          subscriptions_per_socket: { type: 'integer', minimum: 1, default: 100 },
          subscriptions_per_client: { type: 'integer', minimum: 1, default: 500 },
          subscriptions_total: { type: 'integer', minimum: 1, default: 20000 },
          registry_bytes: { type: 'integer', minimum: 64 * 1024, default: 16 * MiB },
          send_buffer_bytes: { type: 'integer', minimum: 4096, default: 128 * 1024 },
          replay_bytes: { type: 'integer', minimum: 64 * 1024, default: 8 * MiB },
        },
      },
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
      /** A delivery still failing this long after its change goes to the dead-letter file. */
      webhook_max_age_seconds: { type: 'integer', minimum: 1, default: 3 * 86400 },
      outbox_bytes: { type: 'integer', minimum: 1024 * 1024, default: 64 * MiB },
      dead_letter_bytes: { type: 'integer', minimum: 64 * 1024, default: 16 * MiB },
      /**
       * Webhooks of `database` streams (issue #29 item 6): one outbox shared by every node, a
       * collection in the stream's database; a claim holds a delivery `lease_ms` (longer than
       * `webhook_timeout_ms`), then another node may take it over.
       */
      cluster: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          outbox_collection: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,119}$', default: 'realtime_outbox' },
          lease_ms: { type: 'integer', minimum: 200, default: 60000 },
          poll_ms: { type: 'integer', minimum: 50, default: 1000 },
          keep_done_seconds: { type: 'integer', minimum: 60, default: 86400 },
        },
      },
      /** Hosts a stream definition's own `webhooks` may post to (none by default: only the operator's config sends webhooks). */
      stream_webhook_hosts: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
      /**
       * Stream id -> the environment variable holding its webhooks' signing secret: a stream's
       * own webhooks sign only with theirs (a definition cannot name another stream's).
       */
      stream_webhook_secrets: {
        type: 'object',
        default: {},
        propertyNames: { minLength: 1, maxLength: 255 },
        additionalProperties: { type: 'string', pattern: '^STREAMS_WEBHOOK_[A-Z0-9_]{1,100}$' },
      },
    },
  },
});
