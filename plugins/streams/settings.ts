import { cpSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, defineSettings } from '../../kernel/index.js';

/** The `streams` section: where definitions and data live, defaults, live sync, cache budgets. */
export interface StreamsSettings {
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
  caches: { match_bytes: number; results_bytes: number; replies_bytes: number; json_bytes: number; orders_bytes: number };
  /** What lands on disk (issue #27): a larger entry or definition file is reported and skipped. */
  files: { max_bytes: number };
}

declare module '../../kernel/config-schema.js' {
  interface ConfigSections {
    streams: StreamsSettings;
  }
}

export const streamsSettings = defineSettings({
  key: 'streams',
  schema: {
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
      /** Limits on the files read (docs/file-sync.md, "Limits"). */
      files: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          max_bytes: { type: 'integer', minimum: 1, default: 16 * 1024 * 1024 },
        },
      },
      /** Byte budgets of the in-memory caches (hostile input must not grow memory without bound). */
      caches: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          match_bytes: { type: 'integer', minimum: 0, default: 8 * 1024 * 1024 },
          results_bytes: { type: 'integer', minimum: 0, default: 8 * 1024 * 1024 },
          replies_bytes: { type: 'integer', minimum: 0, default: 32 * 1024 * 1024 },
          json_bytes: { type: 'integer', minimum: 0, default: 64 * 1024 * 1024 },
          orders_bytes: { type: 'integer', minimum: 0, default: 32 * 1024 * 1024 },
        },
      },
    },
  },
  resolve(settings, { root, config }) {
    settings.path = path.resolve(root, settings.path);
    settings.data_path = path.resolve(root, settings.data_path);
    if (config.data_folder !== undefined) useDataFolder(settings, config.data_folder);
  },
});

/**
 * `--data <folder>`: serve a working copy, so trying the server (the README tour) never
 * writes into the application's own tree. The first boot copies the definitions folder
 * (with its data, when the data folder lives inside it) into `<folder>/streams`; later
 * boots use what is there. Only the streams and data paths move: the config, plugins and
 * the application root stay where they are.
 */
function useDataFolder(settings: StreamsSettings, folder: string): void {
  const streams = path.join(folder, 'streams');
  const dataInside = isInside(settings.path, settings.data_path);
  const data = dataInside ? path.join(streams, path.relative(settings.path, settings.data_path)) : path.join(folder, 'data');
  if (!existsSync(streams)) {
    mkdirSync(folder, { recursive: true });
    try {
      cpSync(settings.path, streams, { recursive: true, errorOnExist: true });
      if (!dataInside && existsSync(settings.data_path)) cpSync(settings.data_path, data, { recursive: true, errorOnExist: true });
    } catch (error) {
      throw new ConfigError(`cannot copy the application into --data ${folder}: ${(error as Error).message}`);
    }
  }
  settings.path = streams;
  settings.data_path = data;
}

function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
