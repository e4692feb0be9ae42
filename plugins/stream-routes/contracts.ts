import { type RegisterOptions } from '../../kernel/index.js';
import type { EntryAttributes } from '../fields/index.js';
import type { EntriesService } from '../entries/index.js';
import type { HttpReply, HttpRequest } from '../http/index.js';
import type { RouteDefinition, StreamDefinition } from '../streams/index.js';

/** What a stream route's handler or view receives. */
export interface StreamRouteContext {
  request: HttpRequest;
  stream: StreamDefinition;
  route: RouteDefinition;
  /** URI placeholders by their name in the route (`id`, `entry.slug`), percent-decoded. */
  params: Record<string, string>;
  /** The entry the URI names (`{id}`, `{entry.<field>}`), serialized for output; undefined when it names none. */
  entry?: Record<string, unknown>;
  /** The stored entry behind `entry`. */
  stored?: EntryAttributes;
  entries: EntriesService;
}

/** A controller action for routes whose `uses` names it (e.g. `App\Books@show` or `books.show`). */
export type StreamRouteHandler = (context: StreamRouteContext) => HttpReply | Promise<HttpReply>;

/** Renders a route's `view` (a template name) with its data into a body. */
export interface ViewRenderer {
  /** Content-Type of what `render` returns (default `text/html; charset=utf-8`). */
  type?: string;
  render(view: string, data: { stream: Record<string, unknown>; entry?: Record<string, unknown>; entries?: Record<string, unknown>[]; params: Record<string, string> }): string | Promise<string>;
}

/** Token `STREAM_ROUTES`: where addons register handlers and the view renderer (call in `register`). */
export interface StreamRoutes {
  registerHandler(uses: string, handler: StreamRouteHandler, options?: RegisterOptions): void;
  registerRenderer(renderer: ViewRenderer): void;
}
