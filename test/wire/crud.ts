/**
 * The data commands of the wire-level stand-in, in the shapes the server answers them:
 * find (one batch, cursor id 0), aggregate without `$changeStream` (mingo), insert / update /
 * delete (per-statement `writeErrors`), findAndModify, createIndexes / listIndexes, drop,
 * dropDatabase. Each write goes to the history (history.ts) as it is applied.
 */
import { Long, type Document } from 'bson';
import { Aggregator } from 'mingo';
import { CommandError, type WireCollection } from './collection.js';
import type { History } from './history.js';

export interface Databases {
  collection(db: string, name: string, create: boolean): WireCollection | undefined;
  drop(db: string, name: string): boolean;
  dropDatabase(db: string): void;
  readonly history: History;
}

function writeError(index: number, error: unknown): Document {
  if (!(error instanceof CommandError)) throw error;
  return { index, code: error.code, errmsg: error.message, ...error.extra };
}

const cursorReply = (ns: string, documents: Document[]): Document => ({ cursor: { id: Long.fromNumber(0), ns, firstBatch: documents } });

/** Runs one data command; undefined when `name` is not one of them. */
export function runCrud(name: string, command: Document, data: Databases): Document | undefined {
  const db = command.$db as string;
  const target = command[name] as string;
  switch (name) {
    case 'find': {
      const collection = data.collection(db, target, false);
      const documents = collection ? collection.select(command.filter ?? {}, { sort: command.sort, skip: command.skip, limit: command.limit, projection: command.projection }) : [];
      return cursorReply(`${db}.${target}`, documents);
    }
    case 'aggregate': {
      const collection = data.collection(db, target, false);
      const documents = new Aggregator(command.pipeline as Document[]).run(collection?.docs ?? []) as Document[];
      return cursorReply(`${db}.${target}`, documents);
    }
    case 'insert': {
      const collection = data.collection(db, target, true)!;
      const writeErrors: Document[] = [];
      let n = 0;
      (command.documents as Document[]).forEach((document, index) => {
        try {
          data.history.record(db, target, collection.insert(document));
          n += 1;
        } catch (error) {
          writeErrors.push(writeError(index, error));
        }
      });
      return writeErrors.length > 0 ? { n, writeErrors } : { n };
    }
    case 'update': {
      const collection = data.collection(db, target, true)!;
      const writeErrors: Document[] = [];
      const upserted: Document[] = [];
      let n = 0;
      let nModified = 0;
      (command.updates as Document[]).forEach((statement, index) => {
        if (statement.multi) throw new CommandError(2, 'wire stand-in: multi updates are not supported');
        try {
          const result = collection.updateOne(statement.q as Document, statement.u as Document, { upsert: statement.upsert === true });
          if (result.applied) data.history.record(db, target, result.applied);
          if (result.matched) {
            n += 1;
            nModified += 1;
          } else if (result.applied) {
            n += 1;
            upserted.push({ index, _id: result.applied.id });
          }
        } catch (error) {
          writeErrors.push(writeError(index, error));
        }
      });
      const reply: Document = { n, nModified };
      if (upserted.length > 0) reply.upserted = upserted;
      if (writeErrors.length > 0) reply.writeErrors = writeErrors;
      return reply;
    }
    case 'delete': {
      const collection = data.collection(db, target, false);
      let n = 0;
      for (const statement of command.deletes as Document[]) {
        for (const gone of collection?.deleteMatching(statement.q as Document, statement.limit as number) ?? []) {
          data.history.record(db, target, gone.applied);
          n += 1;
        }
      }
      return { n };
    }
    case 'findAndModify': {
      const collection = data.collection(db, target, true)!;
      const query = (command.query as Document | undefined) ?? {};
      if (command.remove) {
        const [gone] = collection.deleteMatching(query, 1, command.sort as Document | undefined);
        if (gone) data.history.record(db, target, gone.applied);
        return { lastErrorObject: { n: gone ? 1 : 0 }, value: gone ? gone.before : null };
      }
      const result = collection.updateOne(query, command.update as Document, { upsert: command.upsert === true, sort: command.sort as Document | undefined });
      if (result.applied) data.history.record(db, target, result.applied);
      const after = result.applied && result.applied.type !== 'delete' ? result.applied.after : undefined;
      const value = command.new ? (after ? fieldsOf(after, command.fields as Document | undefined) : null) : result.before ? fieldsOf(result.before, command.fields as Document | undefined) : null;
      const lastErrorObject: Document = { n: result.applied ? 1 : 0, updatedExisting: result.matched };
      if (!result.matched && result.applied) lastErrorObject.upserted = result.applied.id;
      return { lastErrorObject, value };
    }
    case 'createIndexes': {
      const collection = data.collection(db, target, true)!;
      const before = collection.indexes.length;
      for (const index of command.indexes as Document[]) {
        collection.createIndex({ name: index.name as string, key: index.key as Document, unique: index.unique === true, partialFilterExpression: index.partialFilterExpression as Document | undefined });
      }
      return { numIndexesBefore: before, numIndexesAfter: collection.indexes.length, createdCollectionAutomatically: false };
    }
    case 'listIndexes': {
      const collection = data.collection(db, target, false);
      if (!collection) throw new CommandError(26, `ns does not exist: ${db}.${target}`, { codeName: 'NamespaceNotFound' });
      return cursorReply(`${db}.${target}`, collection.indexes.map((i) => ({ v: 2, key: i.key, name: i.name, ...(i.unique && i.name !== '_id_' ? { unique: true } : {}), ...(i.partialFilterExpression ? { partialFilterExpression: i.partialFilterExpression } : {}) })));
    }
    case 'drop':
      if (!data.drop(db, target)) throw new CommandError(26, 'ns not found', { codeName: 'NamespaceNotFound' });
      return { ns: `${db}.${target}`, nIndexesWas: 1 };
    case 'dropDatabase':
      data.dropDatabase(db);
      return { dropped: db };
    default:
      return undefined;
  }
}

/** A findAndModify `fields` projection (exclusions and inclusions of top-level fields). */
function fieldsOf(document: Document, fields: Document | undefined): Document {
  if (!fields || Object.keys(fields).length === 0) return document;
  const values = Object.values(fields);
  if (values.every((v) => v === 0 || v === false)) {
    const out = { ...document };
    for (const name of Object.keys(fields)) delete out[name];
    return out;
  }
  const out: Document = { _id: document._id };
  for (const [name, keep] of Object.entries(fields)) if (keep && name in document) out[name] = document[name];
  if (fields._id === 0 || fields._id === false) delete out._id;
  return out;
}
