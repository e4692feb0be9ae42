import type { ReadScope, Viewer, WhereClause } from '../entries/index.js';
import type { HttpRequest } from '../http/index.js';
import type { StreamDefinition } from '../streams/index.js';

/**
 * The contract between the API and an access plugin (issue #28). The API owns the
 * endpoints, so it applies the decisions; the access plugin (plugins/access) makes them
 * and leaves them on the request. Without one, every caller may do everything, as before.
 */
export type StreamAction = 'list' | 'view' | 'create' | 'update' | 'delete';
export type WriteAction = 'create' | 'update' | 'delete';

/** The authenticated caller, as middleware, hooks and addons read it from `request.locals.user`. */
export interface AccessUser {
  /** The token's `sub`, an API key's `id`; null for the anonymous caller. */
  id: string | null;
  roles: readonly string[];
  /** The verified JWT claims ({} for API keys and the anonymous caller). */
  claims: Record<string, unknown>;
}

/** What one caller may write in one stream. */
export interface WriteScope {
  /** The rows the rule allows (undefined: every row). */
  readonly where: readonly WhereClause[] | undefined;
  readonly hidden: ReadonlySet<string>;
  readonly readonly: ReadonlySet<string>;
}

/** The access decisions of one request. */
export interface RequestAccess {
  readonly user: AccessUser;
  readonly anonymous: boolean;
  /** A role of `access.admin_roles` (or an `api.auth` bearer token): passes every rule, alone writes definitions. */
  readonly admin: boolean;
  /** Names the caller's roles: callers with equal keys may do the same things (what per-caller documents are keyed by). */
  readonly rolesKey: string;
  /** The read scopes of every stream. */
  readonly viewer: Viewer;
  /** The write scope of `action` in a stream, or null when no rule allows it. */
  write(definition: StreamDefinition, action: WriteAction): WriteScope | null;
  /** Whether some rule lets the caller do `action` in the stream (for documents and stream lists). */
  can(definition: StreamDefinition, action: StreamAction): boolean;
  /** The answer to an action the caller may never do: 401 (with a Bearer challenge) for the anonymous caller, else 403. */
  refuse(request: HttpRequest): never;
}

/** Where the access plugin leaves a request's decisions. */
export const ACCESS_LOCAL = 'access';

/** The access decisions of a request, or undefined when no access plugin runs (everything is allowed). */
export function accessOf(request: HttpRequest): RequestAccess | undefined {
  return request.local(ACCESS_LOCAL) as RequestAccess | undefined;
}

/** The read scope of a request in a stream: undefined (no access plugin), or the scope; refused (401/403) when there is none. */
export function readScopeOf(request: HttpRequest, definition: StreamDefinition, action: 'list' | 'view'): ReadScope | undefined {
  const access: RequestAccess | undefined = accessOf(request);
  if (access === undefined) return undefined;
  const scope = access.viewer(definition, action);
  if (scope === null) return access.refuse(request);
  return scope;
}

/**
 * A definition as a caller who is not an administrator sees it: without the `access` key
 * (the rules are the server's business), without the fields hidden from it, and without the
 * inline entries of a `self` source (they are rows: the list endpoint serves those, under the rules).
 */
export function definitionForCaller(json: Record<string, unknown>, hidden: ReadonlySet<string>): Record<string, unknown> {
  const { access: _access, data: _data, ...rest } = json;
  if (hidden.size === 0) return rest;
  const fields = rest.fields;
  if (Array.isArray(fields)) {
    rest.fields = fields.filter((f) => !(f !== null && typeof f === 'object' && hidden.has(String((f as Record<string, unknown>).handle))));
  } else if (fields !== null && typeof fields === 'object') {
    rest.fields = Object.fromEntries(Object.entries(fields).filter(([handle]) => !hidden.has(handle)));
  }
  return rest;
}
