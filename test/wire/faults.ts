/**
 * The fault switch of the wire-level stand-in: what a test asks the "server" to do wrong,
 * consumed by server.ts as requests arrive. Each fault applies `times` times, then is gone.
 */
import type { Document } from 'bson';

/** What happens to a write's reply after the write was applied (the ambiguous outcomes). */
export type AfterApply = { kind: 'drop' } | { kind: 'delay'; ms: number } | { kind: 'writeConcernError' };

interface Armed<T> {
  times: number;
  collection?: string;
  value: T;
}

/** Codes a real server (4.4+) labels ResumableChangeStreamError on a change stream getMore. */
const RESUMABLE_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 234, 133, 43]);

export class Faults {
  private readonly getMores: Array<Armed<Document>> = [];
  private readonly commands = new Map<string, Array<Armed<Document>>>();
  private readonly writes = new Map<string, Array<Armed<AfterApply>>>();

  /**
   * The next change stream getMore(s) fail with `code`: labelled ResumableChangeStreamError
   * when the server would (the driver then resumes by itself), NonResumableChangeStreamError
   * for 280/286 (the driver gives up), unlabelled otherwise.
   */
  failGetMore(code: number, options: { times?: number; collection?: string; labels?: string[] } = {}): void {
    const labels = options.labels ?? (RESUMABLE_CODES.has(code) ? ['ResumableChangeStreamError'] : code === 280 || code === 286 ? ['NonResumableChangeStreamError'] : []);
    this.getMores.push({ times: options.times ?? 1, collection: options.collection, value: { code, errmsg: `getMore failed with ${code} (wire stand-in fault)`, errorLabels: labels } });
  }

  /** The next `name` command(s) fail with this error (e.g. `aggregate` 40573: no change streams here). */
  failCommand(name: string, code: number, options: { times?: number; collection?: string; labels?: string[] } = {}): void {
    const list = this.commands.get(name) ?? [];
    list.push({ times: options.times ?? 1, collection: options.collection, value: { code, errmsg: `${name} failed with ${code} (wire stand-in fault)`, errorLabels: options.labels ?? [] } });
    this.commands.set(name, list);
  }

  /** The next `name` write(s) (insert, update, delete, findAndModify) are applied, then the reply is dropped, delayed or carries a write concern error. */
  afterApply(name: string, value: AfterApply, options: { times?: number; collection?: string } = {}): void {
    const list = this.writes.get(name) ?? [];
    list.push({ times: options.times ?? 1, collection: options.collection, value });
    this.writes.set(name, list);
  }

  getMoreError(collection: string): Document | undefined {
    return take(this.getMores, collection);
  }

  commandError(name: string, collection: string): Document | undefined {
    const list = this.commands.get(name);
    return list ? take(list, collection) : undefined;
  }

  afterWrite(name: string, collection: string): AfterApply | undefined {
    const list = this.writes.get(name);
    return list ? take(list, collection) : undefined;
  }
}

function take<T>(list: Array<Armed<T>>, collection: string): T | undefined {
  const index = list.findIndex((f) => f.collection === undefined || f.collection === collection);
  if (index < 0) return undefined;
  const fault = list[index]!;
  if (--fault.times <= 0) list.splice(index, 1);
  return fault.value;
}
