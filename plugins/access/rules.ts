import { isOperator, LIST_OPERATORS, normalizeOperator, VALUELESS_OPERATORS, type Operator } from '../sources/index.js';
import type { DefinitionProblem } from '../streams/index.js';

/** The actions a rule set names per role. */
export const ACTIONS = ['list', 'view', 'create', 'update', 'delete'] as const;
export type Action = (typeof ACTIONS)[number];

/** A value taken from the caller when the rule is applied. */
export type Reference = { ref: 'user.id' } | { ref: 'claim'; path: string[] } | { ref: 'now' };

export interface Condition {
  field: string;
  operator: Operator;
  /** A literal, a reference, or (list operators) a list of either. */
  value: unknown;
}

/** true: every row; false: none; else OR groups of AND-ed conditions. */
export type Rule = boolean | Condition[][];

export interface RoleRules {
  rules: Record<Action, Rule>;
  hidden: ReadonlySet<string>;
  readonly: ReadonlySet<string>;
  /** Some rule reads `@now`: its scope is resolved per request, never kept. */
  dynamic: boolean;
}

/** A stream's rule set, by role. */
export type RuleSet = ReadonlyMap<string, RoleRules>;

const ROLE = /^[A-Za-z0-9_.:-]{1,64}$/;
const CLAIM = /^@user\.claims\.([A-Za-z0-9_:-]+(?:\.[A-Za-z0-9_:-]+)*)$/;
/** The most OR groups one rule may expand to (`any` lists multiply): a bigger rule is refused when defined. */
const MAX_GROUPS = 64;

export function isReference(value: unknown): value is Reference {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as { ref?: unknown }).ref === 'string';
}

/** The fields a rule may name: undefined when any name is accepted (the config's `default`, checked per stream when applied). */
export type FieldCheck = ((name: string) => boolean) | undefined;

/** The key field's name, when known: it cannot be hidden or read-only (an entry is addressed by it). */
export interface RuleContext {
  fieldExists: FieldCheck;
  keyName?: string;
}

/**
 * Parse a rule set (a definition's `access` key, or the config's `access.default`) into
 * rules ready to resolve per caller, collecting every problem with its JSON path: a typo
 * must fail the boot or the definition write (409), never silently deny or allow.
 */
export function parseRuleSet(raw: unknown, base: string, fieldExists: FieldCheck, keyName?: string): { rules: RuleSet; problems: DefinitionProblem[] } {
  const problems: DefinitionProblem[] = [];
  const rules = new Map<string, RoleRules>();
  const problem = (path: string, message: string): void => {
    problems.push({ path, message });
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problem(base, 'must be an object of roles, each an object of actions');
    return { rules, problems };
  }
  for (const [role, value] of Object.entries(raw as Record<string, unknown>)) {
    const at = `${base}/${role}`;
    if (!ROLE.test(role)) problem(at, `"${role.slice(0, 64)}" is not a role name (letters, digits, _ . : -)`);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      problem(at, 'must be an object with list, view, create, update, delete and fields');
      continue;
    }
    const entry = value as Record<string, unknown>;
    const parsed: RoleRules = { rules: { list: false, view: false, create: false, update: false, delete: false }, hidden: new Set(), readonly: new Set(), dynamic: false };
    for (const [key, ruleValue] of Object.entries(entry)) {
      if (key === 'fields') {
        const fields = parseFields(ruleValue, `${at}/fields`, fieldExists, problem, keyName);
        parsed.hidden = fields.hidden;
        parsed.readonly = fields.readonly;
        continue;
      }
      if (!(ACTIONS as readonly string[]).includes(key)) {
        problem(`${at}/${key}`, `unknown action "${key.slice(0, 40)}" (list, view, create, update, delete or fields)`);
        continue;
      }
      const rule = parseRule(ruleValue, `${at}/${key}`, fieldExists, problem);
      parsed.rules[key as Action] = rule.rule;
      if (rule.dynamic) parsed.dynamic = true;
    }
    rules.set(role, parsed);
  }
  return { rules, problems };
}

function parseFields(
  raw: unknown,
  at: string,
  fieldExists: FieldCheck,
  problem: (path: string, message: string) => void,
  keyName: string | undefined,
): { hidden: ReadonlySet<string>; readonly: ReadonlySet<string> } {
  const out = { hidden: new Set<string>(), readonly: new Set<string>() };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problem(at, 'must be an object with "hidden" and/or "readonly" lists of field names');
    return out;
  }
  for (const [kind, list] of Object.entries(raw as Record<string, unknown>)) {
    if (kind !== 'hidden' && kind !== 'readonly') {
      problem(`${at}/${kind}`, `unknown key "${kind.slice(0, 40)}" (hidden or readonly)`);
      continue;
    }
    if (!Array.isArray(list)) {
      problem(`${at}/${kind}`, 'must be a list of field names');
      continue;
    }
    list.forEach((name, index) => {
      if (typeof name !== 'string' || (fieldExists !== undefined && !fieldExists(name))) problem(`${at}/${kind}/${index}`, `unknown field ${JSON.stringify(name)}`);
      else if (name === keyName) problem(`${at}/${kind}/${index}`, `the key field "${name}" cannot be ${kind}: entries are addressed by it`);
      else out[kind].add(name);
    });
  }
  return out;
}

function parseRule(raw: unknown, at: string, fieldExists: FieldCheck, problem: (path: string, message: string) => void): { rule: Rule; dynamic: boolean } {
  if (raw === true || raw === false) return { rule: raw, dynamic: false };
  if (!Array.isArray(raw)) {
    problem(at, 'must be true, false or a list of [field, operator, value] conditions (with {"any": [...]} for one of)');
    return { rule: false, dynamic: false };
  }
  let dynamic = false;
  // AND of (condition | any-of): expanded into OR groups, as the list language writes filters.
  let groups: Condition[][] = [[]];
  raw.forEach((item, index) => {
    const here = `${at}/${index}`;
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
      const keys = Object.keys(item);
      const any = (item as Record<string, unknown>).any;
      if (keys.length !== 1 || !Array.isArray(any) || any.length === 0) {
        problem(here, 'must be a condition [field, operator, value] or {"any": [conditions]}');
        return;
      }
      const options: Condition[] = [];
      any.forEach((c, i) => {
        const parsed = parseCondition(c, `${here}/any/${i}`, fieldExists, problem);
        if (parsed) {
          options.push(parsed.condition);
          dynamic ||= parsed.dynamic;
        }
      });
      groups = groups.flatMap((g) => options.map((o) => [...g, o]));
      return;
    }
    const parsed = parseCondition(item, here, fieldExists, problem);
    if (parsed) {
      for (const g of groups) g.push(parsed.condition);
      dynamic ||= parsed.dynamic;
    }
  });
  if (groups.length > MAX_GROUPS) {
    problem(at, `expands to ${groups.length} "or" groups; at most ${MAX_GROUPS}`);
    return { rule: false, dynamic };
  }
  // An empty list holds for every row (no condition to fail).
  if (groups.length === 1 && groups[0]!.length === 0) return { rule: true, dynamic };
  return { rule: groups, dynamic };
}

function parseCondition(
  raw: unknown,
  at: string,
  fieldExists: FieldCheck,
  problem: (path: string, message: string) => void,
): { condition: Condition; dynamic: boolean } | undefined {
  if (!Array.isArray(raw) || raw.length < 2 || raw.length > 3) {
    problem(at, 'must be [field, operator, value] (or [field, "NULL" | "NOT NULL"])');
    return undefined;
  }
  const [field, op, value] = raw as [unknown, unknown, unknown];
  let ok = true;
  if (typeof field !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(field)) {
    problem(`${at}/0`, `${JSON.stringify(field)?.slice(0, 60)} is not a field name`);
    ok = false;
  } else if (fieldExists !== undefined && !fieldExists(field.split('.', 1)[0]!)) {
    problem(`${at}/0`, `unknown field "${field}"`);
    ok = false;
  }
  if (typeof op !== 'string' || !isOperator(op)) {
    problem(`${at}/1`, `unknown operator ${JSON.stringify(op)?.slice(0, 40)} (the list endpoint's: = != < <= > >= LIKE NOT LIKE IN NOT IN BETWEEN NOT BETWEEN NULL NOT NULL CONTAINS)`);
    return undefined;
  }
  const operator = normalizeOperator(op);
  if (VALUELESS_OPERATORS.has(operator)) return ok ? { condition: { field: field as string, operator, value: null }, dynamic: false } : undefined;
  if (raw.length !== 3) {
    problem(at, `${operator} needs a value`);
    return undefined;
  }
  let dynamic = false;
  const literal = (v: unknown, where: string): unknown => {
    if (typeof v === 'string' && v.startsWith('@')) {
      if (v.startsWith('@@')) return v.slice(1);
      if (v === '@user.id') return { ref: 'user.id' } satisfies Reference;
      if (v === '@now') {
        dynamic = true;
        return { ref: 'now' } satisfies Reference;
      }
      const claim = CLAIM.exec(v);
      if (claim) return { ref: 'claim', path: claim[1]!.split('.') } satisfies Reference;
      problem(where, `unknown reference "${v.slice(0, 60)}" (@user.id, @user.claims.<name> or @now; "@@" for a literal "@")`);
      ok = false;
      return null;
    }
    if (v !== null && typeof v === 'object') {
      problem(where, 'must be a string, number, boolean or null');
      ok = false;
    }
    return v;
  };
  let shaped: unknown;
  if (LIST_OPERATORS.has(operator)) {
    if (Array.isArray(value)) shaped = value.map((v, i) => literal(v, `${at}/2/${i}`));
    else if (typeof value === 'string' && value.startsWith('@')) shaped = literal(value, `${at}/2`);
    else {
      problem(`${at}/2`, `${operator} takes a list (or a reference to one)`);
      ok = false;
    }
    if ((operator === 'BETWEEN' || operator === 'NOT BETWEEN') && (!Array.isArray(value) || value.length !== 2)) {
      problem(`${at}/2`, `${operator} takes exactly two values`);
      ok = false;
    }
  } else shaped = literal(value, `${at}/2`);
  return ok ? { condition: { field: field as string, operator, value: shaped }, dynamic } : undefined;
}
