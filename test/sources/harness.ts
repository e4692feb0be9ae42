import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import YAML from 'yaml';
import { buildConfig, FolderWatcher, type KernelConfig } from '../../kernel/index.js';
import { decodeCsv, encodeCsv } from '../../plugins/sources/file/csv-codec.js';
import { createSourceRegistry, type Entry, type Source } from '../../plugins/sources/index.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';
import type { SourceHarness } from './contract.js';

export const silentLogger = pino({ level: 'silent' });

export async function tempRoot(prefix = 'sources-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export function configFor(root: string, raw: Record<string, unknown> = {}): KernelConfig {
  return buildConfig(raw, root);
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
        const raw = JSON.parse(readFileSync(definitionFile, 'utf8')) as { data: Entry[] };
        raw.data = change(raw.data ?? []);
        writeFileSync(definitionFile, JSON.stringify(raw, null, 2));
        return;
      }
      const file = path.join(root, `streams/data/films.${format}`);
      const text = readFileSync(file, 'utf8');
      const list = format === 'csv' ? decodeCsv(text) : (JSON.parse(text) as Entry[]);
      const next = change(list);
      writeFileSync(file, format === 'csv' ? encodeCsv(next, 'id') : JSON.stringify(next, null, 2));
    }
  };
}

/** An entry file as a person writes it: JSON, YAML, or front matter with the body below. */
function encodeEntryFile(entry: Entry, format: string): string {
  if (format === 'json') return `${JSON.stringify(entry, null, 2)}\n`;
  if (format === 'yaml') return YAML.stringify(entry);
  const { body, ...rest } = entry;
  return `---\n${YAML.stringify(rest)}---\n${typeof body === 'string' ? body : ''}`;
}
