import type { KeyedLock, Logger } from '../../kernel/index.js';
import type { DefinitionStore } from './contracts.js';
import { DefinitionProblems, type BuildInput } from './definition-builder.js';
import type { DefinitionTroubles } from './definition-troubles.js';
import type { DefinitionChangedPayload } from './hooks.js';
import { importedFiles } from './imports.js';
import type { StreamDefinition } from './types.js';

/** What live sync reads and changes of the registry (DefinitionRegistry hands these over). */
export interface SyncTarget {
  metaId: string;
  root: string;
  path: string;
  logger: Logger;
  definitions: Map<string, StreamDefinition>;
  storedJson: Map<string, string>;
  troubles: DefinitionTroubles;
  lock: KeyedLock;
  store(): DefinitionStore | undefined;
  build(input: BuildInput): Promise<StreamDefinition>;
  changed(payload: DefinitionChangedPayload): Promise<void>;
  publish(definition: StreamDefinition, action: 'created' | 'updated'): Promise<void>;
  /** The sorted list of definitions is stale. */
  reordered(): void;
}

/** The live sync of the definition files: one run at a time, calls made meanwhile folded into one more. */
export class DefinitionSync {
  private syncing: Promise<void> | undefined;
  private syncAgain = false;
  private readonly changedImports = new Set<string>();

  constructor(private readonly target: SyncTarget) {}

  /**
   * Live sync (issue #14): bring the definitions in line with the store's files after an
   * edit on disk. Files that did not change (or hold what this server wrote) are skipped;
   * a changed one is rebuilt and published (its children rebuilt on it); a removed one is
   * unpublished; an edit that cannot be used keeps the last good version, logged once and
   * listed by `troubles()`. Calls made while a sync runs are folded into one more run.
   * `imports`: imported files that changed (the definitions importing them are rebuilt).
   */
  sync(imports: Iterable<string> = []): Promise<void> {
    for (const file of imports) this.changedImports.add(file);
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      try {
        do {
          this.syncAgain = false;
          await this.syncOnce();
        } while (this.syncAgain);
      } catch (error) {
        this.target.logger.error({ err: error, path: this.target.path }, 'reading the definition files failed; the current definitions stay served');
      } finally {
        this.syncing = undefined;
      }
    })();
    return this.syncing;
  }

  /** Resolves once no sync runs. */
  async idle(): Promise<void> {
    await this.syncing;
  }

  private async syncOnce(): Promise<void> {
    const target = this.target;
    const store = target.store();
    if (!store) return;
    const imports = new Set(this.changedImports);
    this.changedImports.clear();
    const published: Array<{ definition: StreamDefinition; action: 'created' | 'updated' }> = [];
    const deleted: string[] = [];
    await target.lock.run('definitions', async () => {
      const invalid = new Map<string, string>();
      const items = await store.loadAll((file, reason) => invalid.set(file, reason));
      const byId = new Map<string, { raw: Record<string, unknown>; file?: string }>();
      for (const item of items) {
        const id = (item.raw.id ?? item.raw.handle ?? item.id) as string | undefined;
        if (typeof id !== 'string' || id === target.metaId || byId.has(id)) {
          target.troubles.report(id ?? item.file ?? '?', { stream: id, file: item.file, reason: id === undefined ? 'a stream definition needs an id' : `the stream id [${id}] is taken` });
          continue;
        }
        byId.set(id, item);
      }
      for (const [file, reason] of invalid) {
        const owner = [...target.definitions.values()].find((d) => d.file === file)?.id;
        target.troubles.report(owner ?? file, { stream: owner, file, reason });
      }
      // Gone from disk (and not merely unreadable right now): no longer served.
      for (const [id, definition] of target.definitions) {
        if (byId.has(id) || (definition.file !== undefined && invalid.has(definition.file))) continue;
        target.definitions.delete(id);
        target.storedJson.delete(id);
        target.troubles.degraded.delete(id);
        deleted.push(id);
      }
      for (const id of [...target.troubles.orphans.keys()]) if (!byId.has(id)) target.troubles.orphans.delete(id);
      for (const [key, trouble] of target.troubles.degraded) {
        if (trouble.file !== undefined && !invalid.has(trouble.file) && (trouble.stream === undefined || !byId.has(trouble.stream))) target.troubles.degraded.delete(key);
      }
      // Parents first, so a child builds on its parent's new version.
      const depth = (id: string, seen = new Set<string>()): number => {
        const parent = byId.get(id)?.raw.extends;
        if (typeof parent !== 'string' || !byId.has(parent) || seen.has(parent)) return 0;
        seen.add(id);
        return 1 + depth(parent, seen);
      };
      const ids = [...byId.keys()].sort((a, b) => depth(a) - depth(b));
      for (const id of ids) {
        const item = byId.get(id)!;
        const json = JSON.stringify(item.raw);
        const current = target.definitions.get(id);
        const parent = item.raw.extends;
        if (typeof parent === 'string' && parent !== id && !target.definitions.has(parent)) {
          // Its parent is gone (deleted by hand, or itself unserved): not served at once, as
          // after a restart (issue #27), and served again when the parent is back.
          if (current) {
            target.definitions.delete(id);
            target.storedJson.delete(id);
            target.troubles.degraded.delete(id);
            deleted.push(id);
          }
          target.troubles.orphan(id, item.file, parent);
          continue;
        }
        const importChanged = current !== undefined && importedFiles(current.raw, target.root).some((f) => imports.has(f));
        if (current && target.storedJson.get(id) === json && !importChanged) {
          if (item.file !== undefined && !invalid.has(item.file)) target.troubles.degraded.delete(id);
          continue;
        }
        if (current && !importChanged && onlyOwnDataChanged(target.storedJson, current, item.raw)) {
          // A `self` stream's entries edited on disk: its source catches up with them itself
          // (entry by entry, with change events); the definition keeps its object.
          current.raw = item.raw;
          current.data = item.raw.data;
          target.storedJson.set(id, json);
          target.troubles.degraded.delete(id);
          continue;
        }
        try {
          const definition = await target.build({ raw: item.raw, id, file: item.file, parentOf: (p) => target.definitions.get(p) });
          target.definitions.set(id, definition);
          target.storedJson.set(id, json);
          target.troubles.warnOnce(definition);
          target.troubles.degraded.delete(id);
          target.troubles.orphans.delete(id);
          published.push({ definition, action: current ? 'updated' : 'created' });
        } catch (error) {
          const reason = error instanceof DefinitionProblems ? error.problems.map((p) => `${p.path}: ${p.message}`).join('; ') : String((error as Error).message ?? error);
          target.troubles.report(id, { stream: id, file: item.file, reason: current ? `${reason} (the last good version is served)` : reason });
        }
      }
      target.reordered();
    });
    for (const id of deleted) {
      target.logger.info({ stream: id }, 'definition file removed: the stream is no longer served');
      await target.changed({ id, action: 'deleted', definition: null });
    }
    for (const { definition, action } of published) {
      target.logger.info({ stream: definition.id, path: definition.file }, `definition ${action} on disk`);
      await target.publish(definition, action);
    }
  }
}

/** True when only `data` differs from the stored file and the stream keeps its entries in this very definition. */
function onlyOwnDataChanged(storedJson: ReadonlyMap<string, string>, current: StreamDefinition, raw: Record<string, unknown>): boolean {
  const source = current.config.source;
  const stored = storedJson.get(current.id);
  if (stored === undefined || source.type !== 'self' || (typeof source.file === 'string' && source.file !== '')) return false;
  const { data: _a, ...before } = JSON.parse(stored) as Record<string, unknown>;
  const { data: _b, ...after } = raw;
  return JSON.stringify(before) === JSON.stringify(after);
}
