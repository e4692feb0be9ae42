import { hash } from 'node:crypto';
import { AppError, NotFoundError } from '../../../kernel/index.js';
import type { ReadScope, WriteCondition } from '../../entries/index.js';
import type { EntryAttributes } from '../../fields/index.js';
import type { StreamDefinition } from '../../streams/index.js';
import { accessOf, type RequestAccess, type WriteScope } from '../access.js';
import type { ApiRequest } from '../contracts.js';
import type { EndpointContext } from './context.js';

const tags = new WeakMap<ReadonlySet<string>, string>();

/**
 * The ETag of an entry read with hidden fields (issue #28): the stored version and a tag of
 * the hidden set, so a caller who sees other fields never gets a 304 for another body. The
 * write endpoints cut the suffix off again before comparing `If-Match` with the version.
 */
export function narrowEtag(version: string, hidden: ReadonlySet<string> | undefined): string {
  if (hidden === undefined || hidden.size === 0) return version;
  let tag = tags.get(hidden);
  if (tag === undefined) {
    tag = hash('sha1', [...hidden].sort().join('\u0000'), 'base64url').slice(0, 10);
    tags.set(hidden, tag);
  }
  return `${version.slice(0, -1)}.${tag}"`;
}

/** 403 naming the first payload field the scope does not let the caller write (the key is the URL's, never checked). */
function checkFields(scope: WriteScope, payload: Record<string, unknown>, keyName: string): void {
  for (const name of Object.keys(payload)) {
    if (name === keyName) continue;
    const rule = scope.hidden.has(name) ? 'hidden' : scope.readonly.has(name) ? 'readonly' : undefined;
    if (rule !== undefined) throw new AppError(403, `The ${name} field cannot be written.`, [{ message: `The ${name} field cannot be written.`, meta: { field: name, rule } }]);
  }
}

function unionHidden(...scopes: Array<{ hidden: ReadonlySet<string> } | null | undefined>): ReadonlySet<string> {
  const out = new Set<string>();
  for (const scope of scopes) if (scope) for (const name of scope.hidden) out.add(name);
  return out;
}

/**
 * The access rules of a write (issue #28) as a guard the entries layer runs under the
 * entry's lock, on the stored version and the one about to be stored:
 * create: the new entry must satisfy the create rule (403); update: the stored entry must
 * satisfy the update rule (else 404, as if it did not exist) and so must the result (403);
 * delete: the stored entry must satisfy the delete rule (404). A PUT/PATCH of a missing key
 * is a create. An action no rule allows: 401 for the anonymous caller, 403 otherwise.
 * Also the scope the written entry is answered with (hidden fields left out).
 */
export function writeCondition(
  context: EndpointContext,
  request: ApiRequest,
  definition: StreamDefinition,
  mode: 'create' | 'replace' | 'patch' | 'delete',
  payload: Record<string, unknown>,
  base: WriteCondition | undefined,
): { condition: WriteCondition | undefined; shown: ReadScope | undefined } {
  const access: RequestAccess | undefined = accessOf(request);
  if (access === undefined || access.admin) return { condition: base, shown: undefined };
  const keyName = definition.config.key_name;
  const key = String(request.params.entry ?? '');
  const satisfies = (scope: WriteScope, entry: EntryAttributes): boolean => context.entries.satisfies(definition, scope.where, entry);
  const create = mode === 'delete' ? null : access.write(definition, 'create');
  const change = mode === 'create' ? null : access.write(definition, mode === 'delete' ? 'delete' : 'update');
  if (create === null && change === null) access.refuse(request);
  const shown: ReadScope = { key: '', where: undefined, hidden: unionHidden(access.viewer(definition, 'view'), create, change) };
  const creating = (after: EntryAttributes | undefined, scope: WriteScope | null): void => {
    if (scope === null) return access.refuse(request);
    checkFields(scope, payload, keyName);
    if (after === undefined || !satisfies(scope, after)) throw new AppError(403, 'The entry does not satisfy the create rule.');
  };
  const guard = (before: EntryAttributes | undefined, after: EntryAttributes | undefined): void => {
    if (before === undefined) return creating(after, create);
    if (change === null) return access.refuse(request);
    if (!satisfies(change, before)) throw new NotFoundError(`Entry [${key}] not found.`);
    if (after === undefined) return;
    checkFields(change, payload, keyName);
    if (!satisfies(change, after)) throw new AppError(403, 'The entry would not satisfy the update rule after the change.');
  };
  // Fields the caller cannot see or write keep their stored values through a PUT.
  const keep = change === null ? undefined : [...change.hidden, ...change.readonly];
  return { condition: { ...base, guard, keep }, shown };
}
