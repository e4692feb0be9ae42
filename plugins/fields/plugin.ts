import { definePlugin, EXTENSIONS } from '../../kernel/index.js';
import { STREAM_REGISTRY } from '../streams/index.js';
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
export const fieldsPlugin = definePlugin(() => {
  let service: FieldsRegistry;
  return {
    name: 'fields',
    requires: ['streams'],
    provides: [FIELDS],
    uses: [STREAM_REGISTRY],
    register({ provide, use, config }) {
      const registry = use(STREAM_REGISTRY);
      service = new FieldsRegistry({
        timezone: config.streams.timezone,
        resolveStream: (id) => registry.get(id),
        extensions: use(EXTENSIONS),
      });
      for (const type of coreTypes) service.registerType(type);
      for (const rule of coreRules) service.registerRule(rule);
      provide(FIELDS, service);
      // Checks run when definitions are built (boot and API writes), after every plugin registered its types.
      registry.addCheck((definition) => service.check(definition));
      registry.addCheck(relatedStreamCheck(service));
    },
    boot({ use, hooks, logger }) {
      const registry = use(STREAM_REGISTRY);
      hooks.on('kernel.booted', () => warnDanglingRelations(service, registry, logger));
    },
  };
});
