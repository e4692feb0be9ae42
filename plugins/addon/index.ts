/**
 * The public addon API: `import { ... } from 'streams-kernel/addon'`.
 *
 * Everything an addon may use is exported here and nowhere else: the plugin helper,
 * each extension point's types, the hook names and payloads, and the tokens an addon
 * may resolve from the container. The rest of the code base is internal and may change
 * in any release; this surface follows semver (see docs/addons.md, "Versioning").
 * A test lists every export, so removing one fails the build.
 */

// First: the reflect-metadata polyfill tsyringe refuses to load without (kernel/container.ts
// loads both), since a process that imports this module without kernel/main (an addon's own
// tests, tools) must work.
import '../../kernel/container.js';

// Kernel: the plugin contract, hooks, config, errors, durable files.
export { definePlugin, type Plugin, type PluginContext, type PluginFactory, type PluginTimeouts } from '../../kernel/plugin.js';
export { serviceRef, type ServiceOf, type ServiceRef } from '../../kernel/service-ref.js';
export { Hooks, type HookKind, type HookKinds, type HookListener } from '../../kernel/hooks.js';
// The hook map: the kernel's lifecycle hooks, augmented by each plugin with the hooks it emits.
export type { HookMap, HookName } from '../../kernel/hook-map.js';
export type { DefinitionChangedPayload, DefinitionExtendPayload, DefinitionJson, DefinitionLoadedPayload, DefinitionLoadingPayload } from '../streams/index.js';
export type { EntryHookPayload } from '../entries/index.js';
export type { RequestHookPayload } from '../http/index.js';
export { HOOK_NAMES } from './hook-names.js';
export type { ConfigSections, KernelConfig } from '../../kernel/config-schema.js';
export { defineSettings, type ConfigSection } from '../../kernel/config-section.js';
export type { InterfaceConfig } from '../api/index.js';
export type { Logger } from '../../kernel/logger.js';
export { AppError, BadRequestError, NotFoundError, ValidationError, isAppError, type ErrorElement } from '../../kernel/errors.js';
export { APP_ROOT, CONFIG, EXTENSIONS, HOOKS, LOGGER } from '../../kernel/tokens.js';
export { RegistrationError, type RegisterOptions } from '../../kernel/extensions.js';
export { writeFileDurable, removeFileDurable } from '../../kernel/tools/durable-fs.js';
export { KeyedLock } from '../../kernel/tools/keyed-lock.js';

// Stream definitions: the registry, definition checks and stores.
export {
  STREAM_REGISTRY,
  fieldOf,
  definitionToJson,
  type DefinitionCheck,
  type DefinitionProblem,
  type DefinitionStore,
  type DefinitionStoreFactory,
  type FieldDefinition,
  type RouteDefinition,
  type SourceConfig,
  type StreamConfig,
  type StreamDefinition,
  type StreamRegistry,
} from '../streams/index.js';

// Field types and validation rules.
export {
  FIELDS,
  type EntryAttributes,
  type FieldType,
  type FieldTypeContext,
  type FieldsService,
  type RelationInfo,
  type RuleDefinition,
  type ValueKind,
  type VerifyContext,
  type VerifyFailure,
} from '../fields/index.js';

// Sources: the contract, the registry of types, the reference criteria engine, building blocks.
export {
  SOURCES,
  MemorySource,
  SingleFileStore,
  matchesWhere,
  compareEntries,
  resolveInRoot,
  assertFileKey,
  type CacheStore,
  type CacheStoreFactory,
  type Entry,
  type EntryKey,
  type EntryStore,
  type Operator,
  type OrderClause,
  type Source,
  type SourceCapabilities,
  type SourceContext,
  type SourceFactory,
  type SourcePage,
  type SourceQuery,
  type SourceRegistry,
  type StoreFactory,
  type StoreHost,
  type WhereClause,
} from '../sources/index.js';

// Entries: the service and criteria read methods for the query endpoint.
export {
  ENTRIES,
  type CriteriaBuilder,
  type CriteriaReadMethod,
  type EntriesService,
  type ListQuery,
  type ListResult,
  type ReadMethodContext,
} from '../entries/index.js';

// HTTP: custom routes on the server.
export { HTTP_SERVER, type HttpReply, type HttpRequest, type HttpServer, type RouteHandler } from '../http/index.js';

// API: middleware by name and a replaceable gate; the caller's access decisions (issue #28, docs/access.md).
export {
  accessOf,
  type AccessUser,
  type RequestAccess,
  API,
  API_MIDDLEWARE,
  ApiGate,
  checkMiddleware,
  type ApiRequest,
  type ApiRouteInfo,
  type ApiService,
  type EndpointName,
  type Middleware,
  type MiddlewareCheck,
  type MiddlewareContext,
  type MiddlewareFactory,
  type MiddlewareHandler,
  type MiddlewareRegistry,
  type Next,
} from '../api/index.js';

// Stream routes: controller actions (`uses`) and the view renderer (`view`).
export { STREAM_ROUTES, type StreamRouteContext, type StreamRouteHandler, type StreamRoutes, type ViewRenderer } from '../stream-routes/index.js';
