import path from 'node:path';
import { inBackground, isTempFile, type FolderWatcher, type Logger } from '../../kernel/index.js';
import type { DefinitionRegistry } from './registry.js';

/**
 * Live sync of definitions (issue #14): the definitions folder and the folders of every
 * imported file are watched; an event runs one `registry.sync` (which compares every file
 * with what is served, so its own writes and duplicate events change nothing). The set of
 * import folders follows the definitions after each sync. Returns the function that stops.
 */
export function watchDefinitionFiles(registry: DefinitionRegistry, watcher: FolderWatcher, folder: string, logger: Logger): () => void {
  const importFolders = new Map<string, () => void>();
  let stopped = false;

  const followImports = (): void => {
    if (stopped) return;
    const wanted = new Set([...registry.importsInUse().keys()].map((file) => path.dirname(file)));
    for (const [dir, stop] of importFolders) {
      if (!wanted.has(dir)) {
        stop();
        importFolders.delete(dir);
      }
    }
    for (const dir of wanted) {
      if (importFolders.has(dir) || dir === folder) continue;
      importFolders.set(dir, watcher.watch(dir, (name) => onImportEvent(dir, name)));
    }
  };

  const sync = (imports: string[] = []): void => {
    void inBackground(logger, 'catching up with the definition files on disk', () => registry.sync(imports).then(followImports));
  };

  const onImportEvent = (dir: string, name: string | undefined): void => {
    const inUse = registry.importsInUse();
    const files = name === undefined ? [...inUse.keys()].filter((f) => path.dirname(f) === dir) : [path.join(dir, name)].filter((f) => inUse.has(f));
    if (files.length > 0) sync(files);
  };

  const stopMain = watcher.watch(folder, (name) => {
    if (name !== undefined && isTempFile(name)) return;
    if (name === undefined || name.endsWith('.json')) sync(name === undefined ? [] : [path.join(folder, name)].filter((f) => registry.importsInUse().has(f)));
  });
  followImports();
  return () => {
    stopped = true;
    stopMain();
    for (const stop of importFolders.values()) stop();
    importFolders.clear();
  };
}
