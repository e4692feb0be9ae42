import { type Logger, ExtensionLedger, type RegisterOptions } from '../../kernel/index.js';
import { accessOf, definitionForCaller, readScopeOf, runMiddleware, type Middleware, type MiddlewareRegistry } from '../api/index.js';
import type { EntriesService } from '../entries/index.js';
import type { EntryAttributes, FieldsService } from '../fields/index.js';
import type { HttpReply, HttpRequest, HttpServer } from '../http/index.js';
import { definitionToJson, type RouteDefinition, type StreamDefinition, type StreamRegistry } from '../streams/index.js';
import type { StreamRouteHandler, StreamRoutes, ViewRenderer } from './contracts.js';
import { compileUri } from './uri.js';

interface Services {
  /** Middleware specs every stream route runs first: the API's group, then its gate. */
  group: string[];
  server: HttpServer;
  registry: StreamRegistry;
  entries: EntriesService;
  fields: FieldsService;
  middleware: MiddlewareRegistry;
  logger: Logger;
}

interface Mounted {
  stream: string;
  handle: string;
  names: string[];
  chain: Middleware[];
}

const HTML = 'text/html; charset=utf-8';

function plain(status: number, message: string): HttpReply {
  return { status, type: 'text/plain; charset=utf-8', body: `${message}\n` };
}

const METHODS: Record<string, string | string[]> = { any: '*', get: 'GET', put: 'PUT', post: 'POST', patch: 'PATCH', delete: 'DELETE' };

/**
 * Serves the `routes` of stream definitions on the HTTP server, outside the API prefix:
 * `uses` calls a handler an addon registered under that name, `view` renders a template
 * through the renderer an addon registered. Definitions created over the API get their
 * routes at once; a route whose stream or handle is gone answers 404.
 */
export class StreamRoutesService implements StreamRoutes {
  private readonly handlers = new Map<string, StreamRouteHandler>();
  private renderer?: ViewRenderer;
  private services?: Services;
  /** Router key (`METHOD pattern`) -> what is mounted there; re-pointed when definitions change. */
  private readonly mounted = new Map<string, Mounted>();

  /** Who registered which handler (the kernel's ledger, given in `register`). */
  ledger = new ExtensionLedger();

  registerHandler(uses: string, handler: StreamRouteHandler, options?: RegisterOptions): void {
    this.ledger.claim('stream route handler', uses, options);
    this.handlers.set(uses, handler);
  }

  registerRenderer(renderer: ViewRenderer): void {
    this.renderer = renderer;
  }

  private groupChain: Middleware[] | undefined;

  /** The group and gate instances, created once (a throttle there counts across every stream route). */
  private group(): Middleware[] {
    this.groupChain ??= this.services!.group.map((spec) => this.services!.middleware.create(spec));
    return this.groupChain;
  }

  /** Mount every route of every definition (boot), then follow definition changes. */
  start(services: Services): void {
    this.services = services;
    for (const definition of services.registry.list()) this.mountStream(definition);
  }

  mountStream(definition: StreamDefinition): void {
    const { server, logger } = this.services!;
    for (const route of definition.routes) {
      const where = { stream: definition.id, route: route.handle };
      const compiled = compileUri(route.uri);
      if (typeof compiled === 'string') {
        logger.warn(where, `stream route not served: ${compiled}`);
        continue;
      }
      if (route.uses && !this.handlers.has(route.uses)) {
        logger.warn({ ...where, uses: route.uses }, 'stream route uses a handler no plugin registers; it answers 501');
      } else if (!route.uses && !this.renderer) {
        logger.warn({ ...where, view: route.view }, 'stream route renders a view but no renderer is registered; it answers 501');
      }
      const method = METHODS[route.verb ?? 'any'] ?? '*';
      const key = `${String(method)} ${compiled.pattern}`;
      const previous = this.mounted.get(key);
      if (previous && previous.stream !== definition.id) {
        logger.warn({ ...where, uri: route.uri, taken: previous.stream }, 'stream route URI already served by another stream; skipped');
        continue;
      }
      let chain: Middleware[];
      try {
        chain = [...this.group(), ...(route.middleware ?? []).map((spec) => this.services!.middleware.create(spec))];
      } catch (error) {
        logger.warn({ ...where, err: error }, 'stream route not served: unknown middleware');
        continue;
      }
      const entry: Mounted = { stream: definition.id, handle: route.handle, names: compiled.names, chain };
      this.mounted.set(key, entry);
      if (!previous) server.route(method, compiled.pattern, (request) => this.dispatch(this.mounted.get(key)!, request));
    }
  }

  private async dispatch(mounted: Mounted, request: HttpRequest): Promise<HttpReply> {
    const definition = this.services!.registry.get(mounted.stream);
    const route = definition?.routes.find((r) => r.handle === mounted.handle);
    if (!definition || !route) return plain(404, 'Not Found');
    const params: Record<string, string> = {};
    mounted.names.forEach((name, index) => (params[name] = request.params[`p${index}`]!));
    const api = {
      interface: 'routes', prefix: '', endpoint: null, resource: null,
      write: !['GET', 'HEAD', 'OPTIONS'].includes(request.method), allow: [], relativePath: request.path.slice(1), resources: [] as const,
    };
    return runMiddleware(request, api, mounted.chain, () => this.serve(definition, route, params, request));
  }

  private async serve(definition: StreamDefinition, route: RouteDefinition, params: Record<string, string>, request: HttpRequest): Promise<HttpReply> {
    const { entries, fields } = this.services!;
    // Under access rules (issue #28) a route shows what the caller may view, as the API does:
    // an entry outside the view rule is a 404, hidden fields are left out (401/403 without a rule).
    const access = accessOf(request);
    const scope = access === undefined ? undefined : readScopeOf(request, definition, 'view');
    const found = await this.findEntry(definition, params);
    const stored = found && scope !== undefined && !entries.satisfies(definition, scope.where, found) ? null : found;
    if (stored === null) return plain(404, 'Not Found');
    const shown = (e: EntryAttributes, hidden = scope?.hidden): Record<string, unknown> => {
      const out = fields.serialize(definition, e);
      for (const name of hidden ?? []) delete out[name];
      return out;
    };
    const entry = stored ? shown(stored) : undefined;
    if (route.uses) {
      const handler = this.handlers.get(route.uses);
      if (!handler) return plain(501, `No handler is registered for "${route.uses}".`);
      return handler({ request, stream: definition, route, params, entry, stored, entries });
    }
    // A route without `uses` renders a view: its `view`, else its name (`as`, default
    // `<stream>.<handle>`), so the `route` shorthand renders `<stream>.view`.
    const view = route.view ?? route.as ?? `${definition.id}.${route.handle}`;
    if (!this.renderer) return plain(501, 'No view renderer is registered.');
    const stream = access === undefined || access.admin ? definitionToJson(definition) : definitionForCaller(definitionToJson(definition), scope?.hidden ?? new Set());
    const data: Parameters<ViewRenderer['render']>[1] = { stream, params, ...(entry ? { entry } : {}) };
    if (!stored) {
      const listed = access === undefined ? undefined : readScopeOf(request, definition, 'list');
      const page = await entries.list(definition.id, { where: [], orderBy: [], page: 1, perPage: 100 }, access?.viewer);
      data.entries = page.entries.map((e) => shown(e, listed?.hidden));
    }
    const body = await this.renderer.render(view, data);
    return { status: 200, type: this.renderer.type ?? HTML, body };
  }

  /**
   * The entry a URI names: `{id}`/`{entry.<key>}` by key, `{entry.<field>}` by that field.
   * undefined when the URI names no entry, null when it names one that does not exist.
   */
  private async findEntry(definition: StreamDefinition, params: Record<string, string>): Promise<EntryAttributes | undefined | null> {
    const { entries } = this.services!;
    const keyName = definition.config.key_name;
    for (const [name, value] of Object.entries(params)) {
      const field = name === 'id' ? keyName : name.startsWith('entry.') ? name.slice('entry.'.length) : undefined;
      if (!field) continue;
      if (field === keyName) return (await entries.find(definition.id, value)) ?? null;
      const found = await entries.list(definition.id, { where: [{ boolean: 'and', field, operator: '=', value }], orderBy: [], page: 1, perPage: 1 });
      return found.entries[0] ?? null;
    }
    return undefined;
  }
}

