import { applyConfigSections, buildConfig, type ConfigSection, type KernelConfig } from '../../kernel/index.js';
import { apiSettings } from '../../plugins/api/index.js';
import { httpSettings } from '../../plugins/http/index.js';
import { realtimeSettings } from '../../plugins/realtime/index.js';
import { streamsSettings } from '../../plugins/streams/index.js';

/** The settings sections of the default core plugins. */
export const CORE_SETTINGS: ConfigSection<never>[] = [httpSettings, apiSettings, streamsSettings, realtimeSettings];

/**
 * A complete config without booting a kernel, for tests that build services by hand: the
 * kernel's part from `buildConfig`, then the core plugins' sections (and `extra` ones), as
 * the kernel validates them at boot.
 */
export function completeConfig(raw: unknown, root: string, extra: ConfigSection<never>[] = []): KernelConfig {
  const config = buildConfig(raw, root);
  applyConfigSections(config, [...CORE_SETTINGS, ...extra].map((section) => ({ plugin: section.key, section })));
  return config;
}
