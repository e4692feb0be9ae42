/**
 * One collection of the wire-level stand-in: documents, the `_id` index and unique
 * (optionally partial) indexes, queried with mingo. Every write is applied whole or not at
 * all (document atomicity), and reports what changed so the history can record it.
 */
import { BSON, ObjectId, type Document } from 'bson';
import { find, Query } from 'mingo';

/** A server error as a reply carries it (`code`, `errmsg`, labels, key details for 11000). */
export class CommandError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly extra: Document = {},
  ) {
    super(message);
  }
}

export function copy<T extends Document>(value: T): T {
  return BSON.deserialize(BSON.serialize(value)) as T;
}

interface IndexSpec {
  name: string;
  key: Document;
  unique: boolean;
  partialFilterExpression?: Document;
}

/** What one write did, for the change history (an update's document is looked up at delivery). */
export type Applied =
  | { type: 'insert' | 'replace'; id: unknown; after: Document }
  | { type: 'update'; id: unknown; after: Document; fields: Document; removed: string[] }
  | { type: 'delete'; id: unknown };

const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(BSON.serialize({ v: a })) === JSON.stringify(BSON.serialize({ v: b }));

export class WireCollection {
  docs: Document[] = [];
  readonly indexes: IndexSpec[] = [{ name: '_id_', key: { _id: 1 }, unique: true }];

  constructor(
    readonly db: string,
    readonly name: string,
  ) {}

  get ns(): string {
    return `${this.db}.${this.name}`;
  }

  select(filter: Document = {}, options: { sort?: Document; skip?: number; limit?: number; projection?: Document } = {}): Document[] {
    let cursor = find(this.docs, filter, options.projection && Object.keys(options.projection).length > 0 ? options.projection : undefined);
    if (options.sort && Object.keys(options.sort).length > 0) cursor = cursor.sort(options.sort as Record<string, 1 | -1>);
    if (options.skip) cursor = cursor.skip(options.skip);
    if (options.limit) cursor = cursor.limit(Math.abs(options.limit));
    return (cursor.all() as Document[]).map((d) => copy(d));
  }

  private first(filter: Document, sort?: Document): Document | undefined {
    let cursor = find(this.docs, filter);
    if (sort && Object.keys(sort).length > 0) cursor = cursor.sort(sort as Record<string, 1 | -1>);
    return (cursor.all() as Document[])[0];
  }

  /** The unique index `candidate` would break (against every document but `replacing`). */
  private clash(candidate: Document, replacing?: Document): { index: IndexSpec; field: string; value: unknown } | undefined {
    for (const index of this.indexes) {
      if (!index.unique) continue;
      const field = Object.keys(index.key)[0]!;
      if (index.partialFilterExpression && !new Query(index.partialFilterExpression).test(candidate)) continue;
      const value = candidate[field];
      for (const other of this.docs) {
        if (other === replacing) continue;
        if (index.partialFilterExpression && !new Query(index.partialFilterExpression).test(other)) continue;
        if (sameValue(other[field], value)) return { index, field, value };
      }
    }
    return undefined;
  }

  private refuseClash(candidate: Document, replacing?: Document): void {
    const found = this.clash(candidate, replacing);
    if (!found) return;
    throw new CommandError(11000, `E11000 duplicate key error collection: ${this.ns} index: ${found.index.name} dup key: { ${found.field}: ${JSON.stringify(found.value)} }`, {
      keyPattern: { [found.field]: 1 },
      keyValue: { [found.field]: found.value },
    });
  }

  insert(document: Document): Applied {
    const doc = copy(document);
    if (doc._id === undefined) doc._id = new ObjectId();
    this.refuseClash(doc);
    this.docs.push(doc);
    return { type: 'insert', id: doc._id, after: copy(doc) };
  }

  /** One document matching `filter` (`sort` picks which) updated, replaced or upserted. */
  updateOne(filter: Document, update: Document, options: { upsert?: boolean; sort?: Document }): { matched: boolean; before?: Document; applied?: Applied } {
    const existing = this.first(filter, options.sort);
    const replacement = !Object.keys(update).some((k) => k.startsWith('$'));
    if (Array.isArray(update)) throw new CommandError(2, 'wire stand-in: pipeline updates are not supported');
    if (!existing) {
      if (!options.upsert) return { matched: false };
      const seed: Document = {};
      for (const [k, v] of Object.entries(filter)) if (!k.startsWith('$') && (v === null || typeof v !== 'object' || v instanceof ObjectId)) seed[k] = v;
      const created = replacement ? { ...copy(update), _id: update._id ?? seed._id } : applyOperators(seed, update, true).doc;
      return { matched: false, applied: this.insert(created) };
    }
    const before = copy(existing);
    if (replacement) {
      const next = { ...copy(update), _id: existing._id };
      this.refuseClash(next, existing);
      this.docs[this.docs.indexOf(existing)] = next;
      return { matched: true, before, applied: { type: 'replace', id: next._id, after: copy(next) } };
    }
    const { doc: next, fields, removed } = applyOperators(copy(existing), update, false);
    this.refuseClash(next, existing);
    this.docs[this.docs.indexOf(existing)] = next;
    return { matched: true, before, applied: { type: 'update', id: next._id, after: copy(next), fields, removed } };
  }

  deleteMatching(filter: Document, limit: number, sort?: Document): Array<{ before: Document; applied: Applied }> {
    let cursor = find(this.docs, filter);
    if (sort && Object.keys(sort).length > 0) cursor = cursor.sort(sort as Record<string, 1 | -1>);
    let gone = cursor.all() as Document[];
    if (limit > 0) gone = gone.slice(0, limit);
    return gone.map((doc) => {
      this.docs.splice(this.docs.indexOf(doc), 1);
      return { before: copy(doc), applied: { type: 'delete', id: doc._id } };
    });
  }

  /** createIndexes: same name and options is a no-op; a unique index over stored duplicates is 11000. */
  createIndex(spec: IndexSpec): void {
    const same = this.indexes.find((i) => i.name === spec.name);
    if (same) {
      if (JSON.stringify(same.key) !== JSON.stringify(spec.key)) throw new CommandError(86, `An existing index has the same name as the requested index but different key: ${spec.name}`);
      if (same.unique !== spec.unique || JSON.stringify(same.partialFilterExpression) !== JSON.stringify(spec.partialFilterExpression)) {
        throw new CommandError(85, `An existing index has the same name as the requested index but different options: ${spec.name}`);
      }
      return;
    }
    if (spec.unique) {
      const field = Object.keys(spec.key)[0]!;
      const scoped = spec.partialFilterExpression ? this.docs.filter((d) => new Query(spec.partialFilterExpression!).test(d)) : this.docs;
      for (let i = 0; i < scoped.length; i++) {
        for (let j = i + 1; j < scoped.length; j++) {
          if (sameValue(scoped[i]![field], scoped[j]![field])) {
            const value = scoped[i]![field];
            throw new CommandError(11000, `Index build failed: collection ${this.ns} :: caused by :: E11000 duplicate key error collection: ${this.ns} index: ${spec.name} dup key: { ${field}: ${JSON.stringify(value)} }`, {
              keyPattern: { [field]: 1 },
              keyValue: { [field]: value },
            });
          }
        }
      }
    }
    this.indexes.push(spec);
  }
}

/** `$set`, `$unset`, `$inc`, `$max`, `$min`, `$currentDate`, `$setOnInsert` on top-level fields: what the kernel sends. */
function applyOperators(target: Document, update: Document, inserting: boolean): { doc: Document; fields: Document; removed: string[] } {
  const fields: Document = {};
  const removed: string[] = [];
  const set = (name: string, value: unknown): void => {
    if (name.includes('.') || name.startsWith('$')) throw new CommandError(2, `wire stand-in: unsupported update path ${name}`);
    target[name] = value;
    fields[name] = value;
  };
  for (const [operator, argument] of Object.entries(update)) {
    const pairs = Object.entries(argument as Document);
    switch (operator) {
      case '$set':
        for (const [k, v] of pairs) set(k, v);
        break;
      case '$setOnInsert':
        if (inserting) for (const [k, v] of pairs) set(k, v);
        break;
      case '$unset':
        for (const [k] of pairs) {
          delete target[k];
          removed.push(k);
        }
        break;
      case '$inc':
        for (const [k, v] of pairs) set(k, ((target[k] as number | undefined) ?? 0) + (v as number));
        break;
      case '$max':
        for (const [k, v] of pairs) if (target[k] === undefined || (target[k] as number) < (v as number)) set(k, v);
        break;
      case '$min':
        for (const [k, v] of pairs) if (target[k] === undefined || (target[k] as number) > (v as number)) set(k, v);
        break;
      case '$currentDate':
        for (const [k] of pairs) set(k, new Date());
        break;
      default:
        throw new CommandError(9, `wire stand-in: unsupported update operator ${operator}`);
    }
  }
  return { doc: target, fields, removed };
}
