import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { buildConfig, type KernelConfig } from '../../kernel/index.js';
import { createSourceRegistry, type Source } from '../../plugins/sources/index.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';
import type { SourceHarness } from './contract.js';

export const silentLogger = pino({ level: 'silent' });

export async function tempRoot(prefix = 'sources-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export function configFor(root: string, raw: Record<string, unknown> = {}): KernelConfig {
  return buildConfig(raw, root);
}

/** A source of one of the built-in types over a temp app root, through the real registry. */
export function builtInHarness(options: { self?: boolean } = {}): () => Promise<SourceHarness> {
  return async () => {
    const root = await tempRoot();
    const config = configFor(root);
    const make = (): ReturnType<typeof createSourceRegistry> => createSourceRegistry(config, root, silentLogger);
    const definitionFile = path.join(root, 'streams', 'films.json');
    const prepare = async (definition: StreamDefinition, initial: boolean): Promise<StreamDefinition> => {
      if (!options.self) return definition;
      if (initial) {
        await import('node:fs/promises').then((fs) => fs.mkdir(path.dirname(definitionFile), { recursive: true }));
        await writeFile(definitionFile, JSON.stringify({ id: 'films', name: 'films', data: [] }));
      }
      const raw = JSON.parse(await readFile(definitionFile, 'utf8')) as Record<string, unknown>;
      return { ...definition, file: definitionFile, data: raw.data, raw };
    };
    return {
      create: async (definition): Promise<Source> => make().for(await prepare(definition, true)),
      reopen: async (definition): Promise<Source> => make().for(await prepare(definition, false)),
      cleanup: () => rm(root, { recursive: true, force: true }),
    };
  };
}
