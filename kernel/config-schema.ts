/**
 * The one JSON Schema of the configuration file. Defaults live here (ajv
 * `useDefaults`), so every plugin reads a complete, typed config. Unknown keys are
 * rejected everywhere except inside a plugin's `options`.
 */
export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    root: { type: 'string', minLength: 1 },
    http: {
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
        transport: { enum: ['auto', 'uws', 'node'], default: 'auto' },
        port_fallback: { type: 'boolean', default: false },
        max_url: { type: 'integer', minimum: 256, default: 8192 },
      },
    },
    api: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        prefix: { type: 'string', pattern: '^[A-Za-z0-9_.~/-]*$', default: 'api' },
        middleware: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
        gate_middleware: { type: 'string', minLength: 1, default: 'api.gate' },
        gate_except: { type: 'array', items: { type: 'string' }, default: [] },
        gate_status: { type: 'integer', minimum: 400, maximum: 599, default: 404 },
        gate_message: { type: 'string', default: 'Not Found' },
        per_page: { type: 'integer', minimum: 1, default: 100 },
        max_per_page: { type: 'integer', minimum: 1, default: 1000 },
        interfaces: {
          type: 'array',
          default: [],
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name'],
            properties: {
              name: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$' },
              prefix: { type: 'string', pattern: '^[A-Za-z0-9_.~/-]*$' },
              middleware: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
              resources: {
                type: 'array',
                items: { enum: ['streams', 'entries'] },
                uniqueItems: true,
                default: ['streams', 'entries'],
              },
            },
          },
        },
        auth: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            tokens: { type: 'array', items: { type: 'string', minLength: 8 }, default: [] },
            tokens_env: { type: 'string', default: 'STREAMS_API_TOKENS' },
            realm: { type: 'string', default: 'streams' },
          },
        },
        cors: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            origins: { type: 'array', items: { type: 'string' }, default: [] },
            methods: { type: 'array', items: { type: 'string' }, default: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] },
            headers: { type: 'array', items: { type: 'string' }, default: ['Authorization', 'Content-Type', 'Accept', 'If-None-Match'] },
            max_age: { type: 'integer', minimum: 0, default: 600 },
            credentials: { type: 'boolean', default: false },
          },
        },
      },
    },
    streams: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        path: { type: 'string', minLength: 1, default: 'streams' },
        data_path: { type: 'string', minLength: 1, default: 'streams/data' },
        streams_id: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$', default: 'core.streams' },
        default_source: { type: 'string', minLength: 1, default: 'filebase' },
        default_format: { enum: ['json', 'yaml', 'md', 'html', 'tpl'], default: 'json' },
        timezone: { type: 'string', minLength: 1, default: 'UTC' },
        /** Where the definitions themselves live (issue 6: `database` for multi-node). */
        source: { type: 'object', default: { type: 'filebase' }, required: ['type'], properties: { type: { type: 'string' } } },
        poll_interval_ms: { type: 'integer', minimum: 100, default: 2000 },
        /** Live file sync (docs/file-sync.md): edits on disk are served without a restart. */
        watch: { type: 'boolean', default: true },
        /** Byte budgets of the in-memory caches (hostile input must not grow memory without bound). */
        caches: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            match_bytes: { type: 'integer', minimum: 0, default: 8 * 1024 * 1024 },
            results_bytes: { type: 'integer', minimum: 0, default: 8 * 1024 * 1024 },
            replies_bytes: { type: 'integer', minimum: 0, default: 32 * 1024 * 1024 },
          },
        },
      },
    },
    /** Change feed, Server-Sent Events, WebSocket subscriptions and webhooks (docs/realtime.md). */
    realtime: {
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
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
      },
    },
    plugins: {
      type: 'array',
      default: [],
      items: {
        oneOf: [
          { type: 'string', minLength: 1 },
          {
            type: 'object',
            additionalProperties: false,
            required: ['name'],
            properties: {
              name: { type: 'string', minLength: 1 },
              enabled: { type: 'boolean', default: true },
              options: { type: 'object', default: {} },
              boot_timeout_ms: { type: 'integer', minimum: 1 },
              shutdown_timeout_ms: { type: 'integer', minimum: 1 },
            },
          },
        ],
      },
    },
    mongodb: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        connections: {
          type: 'object',
          default: {},
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            properties: {
              url: { type: 'string', pattern: '^mongodb(\\+srv)?://' },
              url_env: { type: 'string', default: 'MONGODB_URL' },
              database: { type: 'string', minLength: 1, default: 'streams' },
              options: { type: 'object', default: {} },
            },
          },
        },
      },
    },
  },
} as const;

export interface InterfaceConfig {
  name: string;
  prefix?: string;
  middleware: string[];
  resources: Array<'streams' | 'entries'>;
}

export interface PluginEntryConfig {
  name: string;
  enabled?: boolean;
  options?: Record<string, unknown>;
  /** How long this plugin's register+boot may take (overrides the plugin's own `timeouts.boot`). */
  boot_timeout_ms?: number;
  /** How long its shutdown may take before the kernel moves on (overrides `timeouts.shutdown`). */
  shutdown_timeout_ms?: number;
}

export interface MongoConnectionConfig {
  url?: string;
  url_env: string;
  database: string;
  options: Record<string, unknown>;
}

/** The validated configuration with every default applied. Paths are absolute. */
export interface KernelConfig {
  /** Absolute application root (the config file's folder unless `root` is set). */
  root: string;
  /** Absolute path of the config file, or undefined for an in-memory config. */
  file?: string;
  http: {
    host: string;
    port: number;
    max_body: number;
    stream_buffer_bytes: number;
    base_url: string | null;
    trust_proxy: boolean;
    body_timeout_ms: number;
    shutdown_timeout_ms: number;
    /** `auto`: native uWebSockets.js when a binary loads, else node:http; `uws`: native or exit 1; `node`: node:http. */
    transport: 'auto' | 'uws' | 'node';
    /** When `port` is taken, listen on a free port instead (the url line says which). */
    port_fallback: boolean;
    /** Longest path + query string in characters; a longer request line is answered 414. */
    max_url: number;
  };
  api: {
    enabled: boolean;
    prefix: string;
    middleware: string[];
    gate_middleware: string;
    gate_except: string[];
    gate_status: number;
    gate_message: string;
    per_page: number;
    max_per_page: number;
    interfaces: InterfaceConfig[];
    auth: { tokens: string[]; tokens_env: string; realm: string };
    cors: { origins: string[]; methods: string[]; headers: string[]; max_age: number; credentials: boolean };
  };
  streams: {
    /** Absolute folder of the definition files. */
    path: string;
    /** Absolute folder of the entry data. */
    data_path: string;
    streams_id: string;
    default_source: string;
    default_format: 'json' | 'yaml' | 'md' | 'html' | 'tpl';
    timezone: string;
    source: { type: string; [key: string]: unknown };
    poll_interval_ms: number;
    watch: boolean;
    /** Per stream: filtered-match lists, cached query results (`config.cache`); per API: reply bodies. */
    caches: { match_bytes: number; results_bytes: number; replies_bytes: number };
  };
  realtime: {
    history: { count: number; max_age_seconds: number };
    heartbeat_seconds: number;
    webhooks: Array<{ url: string; streams?: string[]; events?: Array<'created' | 'updated' | 'deleted'>; secret?: string }>;
    webhook_timeout_ms: number;
    webhook_max_attempts: number;
    webhook_retry_base_ms: number;
  };
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent' };
  plugins: Array<string | PluginEntryConfig>;
  mongodb: { connections: Record<string, MongoConnectionConfig> };
}
