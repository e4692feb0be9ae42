import { configValidator, describeAjvError, primaryAjvError } from './ajv.js';
import { configSchema, type ConfigSections, type KernelConfig } from './config-schema.js';
import { ConfigError } from './errors.js';

/**
 * A plugin's settings section: the top-level config key it owns, its JSON Schema (defaults
 * filled by ajv), and an optional step that completes the validated section (paths resolved
 * against the root, launcher flags applied). Core plugins and addons declare theirs alike.
 */
export interface ConfigSection<T = unknown> {
  key: string;
  schema: Record<string, unknown>;
  resolve?(section: T, context: { root: string; config: KernelConfig }): void;
}

/** Typed helper for a section a plugin declared in `ConfigSections` (by augmentation). */
export function defineSettings<K extends keyof ConfigSections & string>(section: ConfigSection<ConfigSections[K]> & { key: K }): ConfigSection<ConfigSections[K]> & { key: K } {
  return section;
}

/** Top-level keys of the kernel itself (its schema's, and the two it sets) that no plugin may claim. */
const KERNEL_KEYS = new Set([...Object.keys(configSchema.properties), 'file', 'data_folder', 'offline', 'report_all']);

/**
 * Validate (defaults filled, in place) and complete the sections of the loaded plugins, then
 * refuse every top-level key that neither the kernel nor a loaded plugin owns, naming the file
 * and the key. Runs when the kernel boots, once the plugins are known.
 */
export function applyConfigSections(config: KernelConfig, owners: Array<{ plugin: string; section: ConfigSection<never> }>): void {
  const where = config.file ?? 'config';
  const record = config as unknown as Record<string, unknown>;
  const claimed = new Map<string, string>();
  for (const { plugin, section } of owners) {
    const previous = claimed.get(section.key);
    if (KERNEL_KEYS.has(section.key)) throw new ConfigError(`plugin "${plugin}" claims "${section.key}", a key of the kernel itself`, where, '/plugins');
    if (previous !== undefined) throw new ConfigError(`plugins "${previous}" and "${plugin}" both claim the settings section "${section.key}"`, where, '/plugins');
    claimed.set(section.key, plugin);
    const validate = configValidator(section.schema);
    // An absent section starts from the schema's own default (an empty object unless it says).
    const holder = { value: record[section.key] };
    if (holder.value === undefined) holder.value = structuredClone((section.schema as { default?: unknown }).default ?? {});
    if (!validate(holder.value)) {
      const { path, message } = describeAjvError(primaryAjvError(validate.errors ?? []));
      throw new ConfigError(message, where, `/${section.key}${path === '/' ? '' : path}`);
    }
    record[section.key] = holder.value;
    section.resolve?.(holder.value as never, { root: config.root, config });
  }
  for (const key of Object.keys(record)) {
    if (KERNEL_KEYS.has(key) || claimed.has(key)) continue;
    throw new ConfigError(`is not a known key: no loaded plugin owns a "${key}" section`, where, `/${key}`);
  }
}
