import { hash } from 'node:crypto';
import { AppError } from '../../kernel/index.js';
import type { AccessUser, RequestAccess, StreamAction, WriteAction, WriteScope } from '../api/index.js';
import type { ReadScope, Viewer, WhereClause } from '../entries/index.js';
import type { HttpRequest } from '../http/index.js';
import { getPath } from '../sources/index.js';
import { keyNameOf, type StreamDefinition } from '../streams/index.js';
import { isReference, type Condition, type RoleRules, type RuleSet } from './rules.js';

/** What every caller's access shares: the rule sets, the interned field sets, the challenge. */
export interface PolicyContext {
  rulesOf(definition: StreamDefinition): RuleSet | undefined;
  /** One object per distinct set, so caches comparing sets by identity hit across callers. */
  intern(names: Iterable<string>): ReadonlySet<string>;
  challenge: string;
}

const EVERYTHING: ReadScope = { key: '', where: undefined, hidden: new Set() };
const ALL_WRITES: WriteScope = { where: undefined, hidden: new Set(), readonly: new Set() };

type Resolved = (ReadScope & { readonly: ReadonlySet<string> }) | null;

/**
 * One caller's access (issue #28): its roles against each stream's rule set, resolved
 * (`@user.id` and claims filled in) once per definition and action and kept with the
 * caller (which the token cache keeps), so a cached token pays a map lookup per request.
 * Roles combine as "any of them": an action is allowed when some role's rule allows it, its
 * rows are the union of those roles' rows, and a field is hidden or read-only when one of
 * those roles says so (the stricter reading: a second role never reveals a field).
 */
export class CallerAccess implements RequestAccess {
  readonly anonymous: boolean;
  readonly rolesKey: string;
  private readonly scopes = new WeakMap<StreamDefinition, Map<StreamAction, Resolved>>();

  constructor(
    readonly user: AccessUser,
    readonly admin: boolean,
    private readonly context: PolicyContext,
  ) {
    this.anonymous = user.id === null && !admin;
    this.rolesKey = admin ? '*admin' : [...new Set(user.roles)].sort().join(',');
  }

  readonly viewer: Viewer = (definition, action) => {
    if (this.admin) return EVERYTHING;
    return this.resolve(definition, action);
  };

  write(definition: StreamDefinition, action: WriteAction): WriteScope | null {
    if (this.admin) return ALL_WRITES;
    return this.resolve(definition, action);
  }

  can(definition: StreamDefinition, action: StreamAction): boolean {
    return this.admin || this.resolve(definition, action) !== null;
  }

  refuse(_request: HttpRequest): never {
    if (this.anonymous) {
      const error = new AppError(401, 'Unauthenticated.');
      error.headers = [['WWW-Authenticate', this.context.challenge]];
      throw error;
    }
    throw new AppError(403, 'Forbidden.');
  }

  private resolve(definition: StreamDefinition, action: StreamAction): Resolved {
    let byAction = this.scopes.get(definition);
    if (byAction === undefined) this.scopes.set(definition, (byAction = new Map()));
    const kept = byAction.get(action);
    if (kept !== undefined) return kept;
    const set = this.context.rulesOf(definition);
    const granting: RoleRules[] = [];
    for (const role of this.user.roles) {
      const rules = set?.get(role);
      if (rules !== undefined && rules.rules[action] !== false) granting.push(rules);
    }
    if (granting.length === 0) {
      byAction.set(action, null);
      return null;
    }
    const hidden = this.context.intern(granting.flatMap((r) => [...r.hidden]));
    const readonly = this.context.intern(granting.flatMap((r) => [...r.readonly]));
    const where = granting.some((r) => r.rules[action] === true) ? undefined : this.rows(definition, granting.map((r) => r.rules[action] as Condition[][]));
    // Every row and every field: the same answers as an administrator's, so the same (empty) key and shared cache entries.
    const key =
      where === undefined && hidden.size === 0 && readonly.size === 0
        ? ''
        : hash('sha1', JSON.stringify([definition.id, action, where ?? null, [...hidden].sort(), [...readonly].sort()]), 'base64url').slice(0, 22);
    const scope = { key, where, hidden, readonly };
    // A rule reading @now is resolved again on every request.
    if (!granting.some((r) => r.dynamic)) byAction.set(action, scope);
    return scope;
  }

  /** The union of the roles' rows as one filter; a group whose reference the caller lacks holds for no row. */
  private rows(definition: StreamDefinition, rules: Condition[][][]): WhereClause[] {
    const out: WhereClause[] = [];
    for (const groups of rules) {
      for (const group of groups) {
        const clauses: WhereClause[] = [];
        let holds = true;
        for (const condition of group) {
          const value = this.fill(condition);
          if (value === MISSING) {
            holds = false;
            break;
          }
          clauses.push({ boolean: clauses.length === 0 && out.length > 0 ? 'or' : 'and', field: condition.field, operator: condition.operator, value });
        }
        if (holds) out.push(...clauses);
      }
    }
    // No group can hold: a filter no stored entry matches (the key is never null).
    if (out.length === 0) out.push({ boolean: 'and', field: keyNameOf(definition), operator: 'NULL', value: null });
    return out;
  }

  private fill(condition: Condition): unknown {
    const one = (value: unknown): unknown => {
      if (!isReference(value)) return value;
      if (value.ref === 'now') return new Date().toISOString();
      const found = value.ref === 'user.id' ? this.user.id : getPath(this.user.claims, value.path.join('.'));
      if (found === undefined || found === null) return MISSING;
      if (Array.isArray(found)) return found.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') ? found : MISSING;
      return typeof found === 'string' || typeof found === 'number' || typeof found === 'boolean' ? found : MISSING;
    };
    if (Array.isArray(condition.value)) {
      const values = condition.value.map(one);
      if (values.includes(MISSING)) return MISSING;
      // A reference to a list inside a list is spread into it.
      return values.flatMap((v) => (Array.isArray(v) ? v : [v]));
    }
    const value = one(condition.value);
    if (value === MISSING) return MISSING;
    // A list claim under a list operator is the list; under a scalar operator the group cannot hold.
    const listOperator = condition.operator === 'IN' || condition.operator === 'NOT IN' || condition.operator === 'BETWEEN' || condition.operator === 'NOT BETWEEN';
    if (listOperator) return Array.isArray(value) ? value : [value];
    return Array.isArray(value) ? MISSING : value;
  }
}

const MISSING = Symbol('missing');
