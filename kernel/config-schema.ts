/**
 * The kernel's own part of the configuration file: `root`, `log` and `plugins`. Every other
 * top-level key is a plugin's settings section, declared by that plugin (`Plugin.settings`,
 * kernel/config-section.ts) and validated when the plugins are loaded; a key no loaded plugin
 * claims is refused then, naming the file and the key. Defaults live in the schemas (ajv
 * `useDefaults`), so every plugin reads a complete, typed config.
 */
export const configSchema = {
  type: 'object',
  properties: {
    $schema: { type: 'string' },
    root: { type: 'string', minLength: 1 },
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
  },
} as const;

export interface PluginEntryConfig {
  name: string;
  enabled?: boolean;
  options?: Record<string, unknown>;
  /** How long this plugin's register+boot may take (overrides the plugin's own `timeouts.boot`). */
  boot_timeout_ms?: number;
  /** How long its shutdown may take before the kernel moves on (overrides `timeouts.shutdown`). */
  shutdown_timeout_ms?: number;
}

/**
 * The settings sections of the plugins, by top-level key. Empty here: each plugin adds its
 * own by augmenting this interface next to its schema, as Vite plugins augment Rollup's types:
 *
 *     declare module '../../kernel/config-schema.js' {
 *       interface ConfigSections { http: HttpSettings }
 *     }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- empty on purpose: plugins augment it (see above)
export interface ConfigSections {}

/** The validated configuration with every default applied. Paths are absolute. */
export interface KernelConfig extends ConfigSections {
  /** Absolute application root (the config file's folder unless `root` is set). */
  root: string;
  /** Absolute path of the config file, or undefined for an in-memory config. */
  file?: string;
  /** `--data <folder>` of the launcher: the streams plugin serves a working copy from there. */
  data_folder?: string;
  /** Set by the `streams` tools (check, export, import, migrate): every plugin boots, nothing listens. */
  offline?: boolean;
  /** Set by `streams check`: a definition that cannot be built is logged as an error (file, path, problem) and skipped, so one run names them all. */
  report_all?: boolean;
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent' };
  plugins: Array<string | PluginEntryConfig>;
}
