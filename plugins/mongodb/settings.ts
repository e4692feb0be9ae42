import { defineSettings } from '../../kernel/index.js';

/** One named connection (`mongodb.connections.<name>`). */
export interface MongoConnectionConfig {
  url?: string;
  url_env: string;
  database: string;
  options: Record<string, unknown>;
}

/** The `mongodb` section (docs/mongodb.md). */
export interface MongoSettings {
  connections: Record<string, MongoConnectionConfig>;
}

declare module '../../kernel/config-schema.js' {
  interface ConfigSections {
    mongodb: MongoSettings;
  }
}

export const mongodbSettings = defineSettings({
  key: 'mongodb',
  schema: {
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
});
