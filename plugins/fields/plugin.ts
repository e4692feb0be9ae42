import { CONFIG, definePlugin, type KernelConfig } from '../../kernel/index.js';
import { STREAM_REGISTRY, type StreamRegistry } from '../streams/index.js';
import { coreRules } from './rules/core-rules.js';
import { relatedStreamCheck, warnDanglingRelations } from './related-streams.js';
import { FieldsRegistry } from './service.js';
import { FIELDS } from './tokens.js';
import { coreTypes } from './types/core-types.js';

/**
 * The fields plugin: the 24 core field types and the Laravel-style rules, registered
 * through the same `registerType`/`registerRule` an addon uses, and the definition
 * check that makes an unknown type or rule a clear startup error.
 */
export const fieldsPlugin = definePlugin({
  name: 'fields',
  requires: ['streams'],
  register({ container, config }) {
    const settings = (container.isRegistered(CONFIG, true) ? container.resolve<KernelConfig>(CONFIG) : config) as KernelConfig;
    const registry = container.isRegistered(STREAM_REGISTRY, true) ? container.resolve<StreamRegistry>(STREAM_REGISTRY) : undefined;
    const service = new FieldsRegistry({
      timezone: settings.streams?.timezone ?? 'UTC',
      resolveStream: (id) => registry?.get(id),
    });
    for (const type of coreTypes) service.registerType(type);
    for (const rule of coreRules) service.registerRule(rule);
    container.registerInstance(FIELDS, service);
    // Checks run when definitions are built (boot and API writes), after every plugin registered its types.
    registry?.addCheck((definition) => service.check(definition));
    registry?.addCheck(relatedStreamCheck(service));
  },
  boot({ container, hooks, logger }) {
    if (!container.isRegistered(STREAM_REGISTRY, true)) return;
    const registry = container.resolve<StreamRegistry>(STREAM_REGISTRY);
    const service = container.resolve<FieldsRegistry>(FIELDS);
    hooks.on('kernel.booted', () => warnDanglingRelations(service, registry, logger));
  },
});
