/**
 * Public surface of the access plugin (issue #28): identities (JWT bearer tokens, API keys,
 * the anonymous role) and per-stream rules. The decisions reach the endpoints through the
 * API's `accessOf(request)`; the caller is `request.locals.user`.
 */
export { accessPlugin as default } from './plugin.js';
export { accessSettings, type AccessSettings, type ApiKeyConfig } from './settings.js';
export { parseRuleSet, type RuleSet } from './rules.js';
