import { ConfigError, definePlugin } from '../../kernel/index.js';
import { API, apiTokens } from '../api/index.js';
import { fieldOf, keyNameOf, STREAM_REGISTRY, type StreamDefinition } from '../streams/index.js';
import { Authenticator } from './authenticator.js';
import type { PolicyContext } from './caller-access.js';
import { accessMiddleware, requireCaller } from './middleware.js';
import { parseRuleSet, type RuleSet } from './rules.js';
import { accessSettings } from './settings.js';

/** The JSON Schema of a definition's `access` key; the rule check (`parseRuleSet`) names each problem's path. */
const ACCESS_KEY_SCHEMA = { type: 'object' };

/** The fields a stream's rules may name: its fields and its key. */
function fieldsOf(definition: StreamDefinition): (name: string) => boolean {
  const key = keyNameOf(definition);
  return (name) => name === key || fieldOf(definition, name) !== undefined;
}

/**
 * The access plugin (issue #28): identities (JWT, API keys, the anonymous role) and
 * per-stream rules (a definition's `access` key) applied by the API on every path. Loaded
 * when the config has an `access` section; the `api.auth` bearer tokens stay administrators.
 */
export const accessPlugin = definePlugin(() => {
  let authenticator: Authenticator | undefined;
  let policy: PolicyContext | undefined;
  return {
    name: 'access',
    settings: accessSettings,
    requires: ['api', 'streams', 'entries'],
    provides: [],
    uses: [API, STREAM_REGISTRY],
    register({ use, config, hooks, logger }) {
      const settings = config.access;
      const where = config.file ?? 'config';
      const api = use(API);
      const registry = use(STREAM_REGISTRY);
      hooks.on('definition.extend', ({ extend }) => extend('access', ACCESS_KEY_SCHEMA));
      registry.addCheck((definition) =>
        definition.extra.access === undefined ? [] : parseRuleSet(definition.extra.access, '/access', fieldsOf(definition), keyNameOf(definition)).problems,
      );
      if (settings.default !== undefined) {
        const first = parseRuleSet(settings.default, '/access/default', undefined).problems[0];
        if (first !== undefined) throw new ConfigError(first.message, where, first.path);
      }
      /**
       * `access.default` for a stream without rules, checked against that stream's fields: a
       * condition on a field it lacks would hold for the wrong rows (`!=` on a missing field), so
       * such a stream stays for administrators only, said once in the log.
       */
      const fallbackFor = (definition: StreamDefinition): RuleSet | undefined => {
        if (settings.default === undefined) return undefined;
        const parsed = parseRuleSet(settings.default, '/access/default', fieldsOf(definition), keyNameOf(definition));
        if (parsed.problems.length === 0) return parsed.rules;
        logger.warn({ stream: definition.id, problems: parsed.problems }, 'access.default does not fit this stream: it is for administrators only');
        return undefined;
      };
      // Rule sets are parsed once per definition object (a change builds a new one).
      const parsedRules = new WeakMap<StreamDefinition, RuleSet | undefined>();
      const interned = new Map<string, ReadonlySet<string>>();
      const challenge = `Bearer realm="${settings.realm}"`;
      policy = {
        rulesOf(definition) {
          if (parsedRules.has(definition)) return parsedRules.get(definition);
          const own = definition.extra.access;
          // A stream without rules is for administrators only, unless the config gives a default.
          const rules = own === undefined ? fallbackFor(definition) : parseRuleSet(own, '/access', fieldsOf(definition), keyNameOf(definition)).rules;
          parsedRules.set(definition, rules);
          return rules;
        },
        intern(names) {
          const sorted = [...new Set(names)].sort();
          const key = sorted.join('\u0000');
          let set = interned.get(key);
          if (set === undefined) interned.set(key, (set = new Set(sorted)));
          return set;
        },
        challenge,
      };
      // The authenticator is built at boot (it reads the JWKS file); no request arrives before the transport listens.
      api.middleware.register('access', () => accessMiddleware(() => authenticator!));
      api.middleware.register('auth.bearer', () => requireCaller(challenge), { replace: true });
      api.useIdentity('access');
    },
    boot({ config }) {
      // Read the keys now so a bad JWKS file or secret fails the boot, not the first request.
      authenticator = new Authenticator(config.access, config, policy!, apiTokens(config));
    },
  };
});
