import { defineSettings } from '../../kernel/index.js';

/** One interface of the API (`api.interfaces[]`): its prefix, middleware and resources. */
export interface InterfaceConfig {
  name: string;
  prefix?: string;
  middleware: string[];
  resources: Array<'streams' | 'entries'>;
}

/** The `api` section: interfaces, middleware, gate, paging, auth, CORS (docs/configuration.md, "api"). */
export interface ApiSettings {
  enabled: boolean;
  prefix: string;
  middleware: string[];
  gate_middleware: string;
  gate_except: string[];
  gate_status: number;
  /** null: the status's own reason phrase (`Forbidden` for 403). */
  gate_message: string | null;
  per_page: number;
  max_per_page: number;
  interfaces: InterfaceConfig[];
  auth: { tokens: string[]; tokens_env: string; realm: string };
  cors: { origins: string[]; methods: string[]; headers: string[]; max_age: number; credentials: boolean };
}

declare module '../../kernel/config-schema.js' {
  interface ConfigSections {
    api: ApiSettings;
  }
}

export const apiSettings = defineSettings({
  key: 'api',
  schema: {
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
      gate_message: { type: ['string', 'null'], minLength: 1, default: null },
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
          // The conditional headers a browser client needs for the lost-update-safe edit (If-Match)
          // and revalidation, and Last-Event-ID for resuming an event stream read with fetch.
          headers: { type: 'array', items: { type: 'string' }, default: ['Authorization', 'Content-Type', 'Accept', 'If-Match', 'If-None-Match', 'Last-Event-ID'] },
          max_age: { type: 'integer', minimum: 0, default: 600 },
          credentials: { type: 'boolean', default: false },
        },
      },
    },
  },
});
