import type { DependencyContainer } from 'tsyringe';
import { ConfigError, type KernelConfig, type Logger, ExtensionLedger, type RegisterOptions } from '../../kernel/index.js';
import type { HttpReply, HttpRequest } from '../http/index.js';
import type { ApiRequest, ApiService, EndpointName, ExtraEndpoint, Middleware, ResourceName } from './contracts.js';
import { errorEnvelope } from './envelope.js';
import { DefaultMiddlewareRegistry } from './middleware-registry.js';
import { registerBuiltinMiddleware } from './middleware/builtins.js';
import type { InterfaceSetup } from './dispatcher.js';

/** Normalize an interface prefix to `/api` form ('' for the root). */
export function prefixPath(prefix: string): string {
  const trimmed = prefix.replace(/^\/+|\/+$/g, '');
  return trimmed.length === 0 ? '' : `/${trimmed}`;
}

/**
 * The API's registry side: middleware by name, resource and endpoint middleware, and
 * the envelope helpers. Filled during `register` (by the API and addons); frozen into
 * per-endpoint chains at boot.
 */
export class DefaultApiService implements ApiService {
  readonly middleware: DefaultMiddlewareRegistry;
  private readonly resourceSpecs = new Map<ResourceName, string[]>();
  private readonly endpointSpecs = new Map<EndpointName, string[]>();
  private readonly withoutSpecs = new Map<EndpointName, Set<string>>();
  private base: ((request: HttpRequest) => string) | null = null;

  constructor(
    private readonly config: KernelConfig,
    container: DependencyContainer,
    logger: Logger,
    private readonly ledger: ExtensionLedger = new ExtensionLedger(),
  ) {
    this.middleware = new DefaultMiddlewareRegistry(config, container, logger, ledger);
    registerBuiltinMiddleware(this.middleware);
  }

  private readonly extra: ExtraEndpoint[] = [];

  addEndpoint(endpoint: ExtraEndpoint, options?: RegisterOptions): void {
    this.ledger.claim('API endpoint', endpoint.name, options);
    const index = this.extra.findIndex((e) => e.name === endpoint.name);
    if (index >= 0) this.extra.splice(index, 1, endpoint);
    else this.extra.push(endpoint);
  }

  /** The endpoints plugins added, in order. */
  extraEndpoints(): readonly ExtraEndpoint[] {
    return this.extra;
  }

  private identity: string | undefined;

  useIdentity(spec: string): void {
    if (this.identity !== undefined && this.identity !== spec) throw new Error(`the identity middleware is "${this.identity}" already`);
    this.identity = spec;
  }

  groupSpecs(): string[] {
    const api = this.config.api;
    const group = [...api.middleware, api.gate_middleware];
    if (this.identity !== undefined) {
      const bearer = group.findIndex((spec) => spec.split(':')[0] === 'auth.bearer');
      group.splice(bearer >= 0 && bearer < group.length - 1 ? bearer : group.length - 1, 0, this.identity);
    }
    return group;
  }

  addResourceMiddleware(resource: ResourceName, ...specs: string[]): void {
    this.resourceSpecs.set(resource, [...(this.resourceSpecs.get(resource) ?? []), ...specs]);
  }

  addEndpointMiddleware(endpoint: EndpointName, ...specs: string[]): void {
    this.endpointSpecs.set(endpoint, [...(this.endpointSpecs.get(endpoint) ?? []), ...specs]);
  }

  withoutEndpointMiddleware(endpoint: EndpointName, ...specs: string[]): void {
    const set = this.withoutSpecs.get(endpoint) ?? new Set<string>();
    for (const s of specs) set.add(s);
    this.withoutSpecs.set(endpoint, set);
  }

  setBaseUrl(base: (request: HttpRequest) => string): void {
    this.base = base;
  }

  baseUrl(request: HttpRequest): string {
    if (!this.base) throw new Error('the API has not booted yet');
    return this.base(request);
  }

  errorReply(request: ApiRequest, status: number, message: string, headers?: Array<[string, string]>): HttpReply {
    return { status, headers, body: errorEnvelope(this.errorLinks(request), [{ message }]) };
  }

  errorLinks = (request: ApiRequest): string => {
    const base = this.baseUrl(request);
    const self = request.query.length > 0 ? `${base}${request.path}?${request.query}` : `${base}${request.path}`;
    // `streams` only where this interface serves the stream definitions.
    if (!request.api.resources.includes('streams')) return `{"self":${JSON.stringify(self)}}`;
    return `{"self":${JSON.stringify(self)},"streams":${JSON.stringify(`${base}${request.api.prefix}/streams`)}}`;
  };

  /**
   * The interfaces of the config (or the default one) with their middleware chains.
   * Each middleware is instantiated once per place (group and gate once, interface
   * middleware once per interface...), so a `throttle` counts across its whole scope.
   */
  interfaces(): InterfaceSetup[] {
    const api = this.config.api;
    const declared = api.interfaces.length > 0 ? api.interfaces : [{ name: 'api', prefix: api.prefix, middleware: [], resources: ['streams', 'entries'] as Array<'streams' | 'entries'> }];
    const where = this.config.file ?? 'config';
    const seen = new Map<string, string>();
    const make = (spec: string, gate = false): Tagged => ({ spec, fn: this.middleware.create(spec), gate });
    const specs = this.groupSpecs();
    // The gate is the last of the group (always there; `withoutEndpointMiddleware` cannot drop it).
    const group = specs.map((spec, index) => make(spec, index === specs.length - 1));
    return declared.map((item) => {
      const prefix = prefixPath(item.prefix ?? api.prefix);
      const other = seen.get(prefix);
      if (other !== undefined) throw new ConfigError(`interfaces "${other}" and "${item.name}" share the prefix "${prefix || '/'}"`, where, '/api/interfaces');
      seen.set(prefix, item.name);
      const own = [...group, ...(item.middleware ?? []).map((spec) => make(spec))];
      const perResource = new Map<ResourceName, Tagged[]>();
      const resourceTagged = (resource: ResourceName): Tagged[] => {
        let list = perResource.get(resource);
        if (!list) {
          list = (this.resourceSpecs.get(resource) ?? []).map((spec) => make(spec));
          perResource.set(resource, list);
        }
        return list;
      };
      return {
        config: { ...item, middleware: item.middleware ?? [], resources: item.resources ?? ['streams', 'entries'] },
        prefix,
        base: own.map((m) => m.fn),
        // Only header-setting middleware may shape answers the transport writes itself.
        transportReplyMiddleware: own.filter((m) => m.spec.split(':')[0] === 'cors').map((m) => m.fn),
        chainFor: (resource: ResourceName, endpoint: EndpointName) => {
          const inherited = [...own, ...resourceTagged(resource)];
          const without = this.withoutSpecs.get(endpoint);
          // The gate always runs: `withoutEndpointMiddleware` cannot remove it.
          const kept = without ? inherited.filter((m) => m.gate || !without.has(m.spec)) : inherited;
          const extra = (this.endpointSpecs.get(endpoint) ?? []).map((spec) => this.middleware.create(spec));
          return [...kept.map((m) => m.fn), ...extra];
        },
      };
    });
  }
}

interface Tagged {
  spec: string;
  fn: Middleware;
  gate: boolean;
}
