import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildConfig, Kernel, type Plugin } from '../../kernel/index.js';
import { STREAM_REGISTRY, type StreamRegistry } from '../../plugins/streams/index.js';
import { DEFAULT_PLUGINS } from '../../kernel/core-plugins.js';

/** Only the streams plugin: the other core plugins are switched off in the config. */
const STREAMS_ONLY = DEFAULT_PLUGINS.filter((name) => name !== 'streams').map((name) => ({ name, enabled: false }));

export interface RegistryApp {
  root: string;
  kernel: Kernel;
  registry: StreamRegistry;
  close(): Promise<void>;
}

/** Write `files` (relative path -> JSON value or text) into a temp app and boot the streams plugin. */
export async function withFiles(files: Record<string, unknown>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'streams-defs-'));
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return root;
}

export async function bootRegistry(files: Record<string, unknown>, plugins: Plugin[] = []): Promise<RegistryApp> {
  const root = await withFiles(files);
  const config = buildConfig({ log: { level: 'silent' }, plugins: STREAMS_ONLY }, root);
  const kernel = new Kernel(config, { plugins });
  try {
    await kernel.boot();
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return {
    root,
    kernel,
    registry: kernel.get(STREAM_REGISTRY),
    close: async () => {
      await kernel.shutdown();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Boot and expect a failure; returns the error message. */
export async function bootError(files: Record<string, unknown>, plugins: Plugin[] = []): Promise<string> {
  const root = await withFiles(files);
  const kernel = new Kernel(buildConfig({ log: { level: 'silent' }, plugins: STREAMS_ONLY }, root), { plugins });
  try {
    await kernel.boot();
    await kernel.shutdown();
    throw new Error('boot succeeded but was expected to fail');
  } catch (error) {
    return (error as Error).message;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
