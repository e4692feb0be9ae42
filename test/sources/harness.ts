import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import YAML from 'yaml';
import { FolderWatcher, type KernelConfig } from '../../kernel/index.js';
import { completeConfig } from '../helpers/config.js';
import { decodeCsv, encodeCsv } from '../../plugins/sources/file/csv-codec.js';
import { createSourceRegistry, type Entry, type Source } from '../../plugins/sources/index.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';
import type { SourceHarness } from './contract.js';

export const silentLogger = pino({ level: 'silent' });

export async function tempRoot(prefix = 'sources-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export function configFor(root: string, raw: Record<string, unknown> = {}): KernelConfig {
  return completeConfig(raw, root);
}

/** A source of one of the built-in types over a temp app root, through the real registry, with live sync on. */
export function builtInHarness(options: { self?: boolean } = {}): () => Promise<SourceHarness> {
  return async () => {
    const root = await tempRoot();
    const config = configFor(root);
    const watcher = new FolderWatcher(silentLogger);
    const make = (): ReturnType<typeof createSourceRegistry> => {
      const registry = createSourceRegistry(config, root, silentLogger);
      registry.watcher = watcher;
      return registry;
    };
    const definitionFile = path.join(root, 'streams', 'films.json');
    let created: StreamDefinition | undefined;
    const prepare = async (definition: StreamDefinition, initial: boolean): Promise<StreamDefinition> => {
      created = definition;
      if (!options.self) return definition;
      if (initial) {
        await mkdir(path.dirname(definitionFile), { recursive: true });
        await writeFile(definitionFile, JSON.stringify({ id: 'films', name: 'films', data: [] }));
      }
      const raw = JSON.parse(await readFile(definitionFile, 'utf8')) as Record<string, unknown>;
      return { ...definition, file: definitionFile, data: raw.data, raw };
    };
    return {
      create: async (definition): Promise<Source> => make().for(await prepare(definition, true)),
      reopen: async (definition): Promise<Source> => make().for(await prepare(definition, false)),
      cleanup: async () => {
        watcher.close();
        await rm(root, { recursive: true, force: true });
      },
      disk: {
        write: (entry) => handEdit(created!, (list) => [...list.filter((e) => e.id !== entry.id), entry], entry),
        remove: (key) => handEdit(created!, (list) => list.filter((e) => e.id !== key), undefined, key),
      },
    };

    /**
     * Edit the stored files as an operator would, synchronously (a read-modify-write of a
     * whole file in one step, so the test itself never races the source's own rewrite).
     */
    async function handEdit(definition: StreamDefinition, change: (list: Entry[]) => Entry[], entry?: Entry, key?: number): Promise<void> {
      const source = definition.config.source;
      const format = typeof source.format === 'string' ? source.format : 'json';
      if (source.type === 'filebase') {
        const folder = path.join(root, 'streams/data/films');
        mkdirSync(folder, { recursive: true });
        if (entry === undefined) return rmSync(path.join(folder, `${String(key)}.${format}`), { force: true });
        writeFileSync(path.join(folder, `${String(entry.id)}.${format}`), encodeEntryFile(entry, format));
        return;
      }
      if (source.type === 'self') {
        return carefulEdit(definitionFile, (text) => {
          const raw = JSON.parse(text) as { data: Entry[] };
          raw.data = change(raw.data ?? []);
          return JSON.stringify(raw, null, 2);
        });
      }
      const file = path.join(root, `streams/data/films.${format}`);
      carefulEdit(file, (text) => {
        const next = change(format === 'csv' ? decodeCsv(text) : (JSON.parse(text) as Entry[]));
        return format === 'csv' ? encodeCsv(next, 'id') : JSON.stringify(next, null, 2);
      });
    }
  };
}

/**
 * A whole-file edit by an editor that does not itself lose the server's writes: it saves
 * to a temp file and renames it over the original only when the original did not change
 * while it edited (else it starts over). What is tested is the server's side: that none
 * of *its* rewrites loses such an edit.
 */
function carefulEdit(file: string, edit: (text: string) => string): void {
  for (;;) {
    const before = statSync(file);
    const text = edit(readFileSync(file, 'utf8'));
    const temp = `${file}.edit`;
    writeFileSync(temp, text);
    const now = statSync(file);
    if (now.ino === before.ino && now.mtimeMs === before.mtimeMs && now.size === before.size) {
      renameSync(temp, file);
      return;
    }
  }
}

/** An entry file as a person writes it: JSON, YAML, or front matter with the body below. */
function encodeEntryFile(entry: Entry, format: string): string {
  if (format === 'json') return `${JSON.stringify(entry, null, 2)}\n`;
  if (format === 'yaml') return YAML.stringify(entry);
  const { body, ...rest } = entry;
  return `---\n${YAML.stringify(rest)}---\n${typeof body === 'string' ? body : ''}`;
}
