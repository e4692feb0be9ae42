/**
 * Test helpers for addon authors: `import { startTestApp } from 'streams-kernel/testing'`.
 *
 *   const app = await startTestApp({
 *     streams: { planets: { fields: { id: 'integer', name: 'string' } } },
 *     data: { planets: [{ id: 1, name: 'Tatooine' }] },   // -> streams/data/planets/1.json
 *     config: { plugins: ['my-addon'] },                  // merged over the test defaults
 *     plugins: [myAddonObject],                           // or plugin objects directly
 *     files: { 'fields/common.json': '{...}' },           // any other file under the app root
 *   });
 *   const res = await app.request('GET', '/api/streams/planets/entries/1');
 *   res.status; res.headers['etag']; res.json; res.text;
 *   await app.close();   // shuts the kernel down and removes the temporary folder
 *
 * It boots the real kernel in-process on 127.0.0.1, port 0, with logging silent, in a
 * fresh temporary application folder, and talks to it over real HTTP (undici).
 */
// First: tsyringe refuses to load without the polyfill, and an addon's own test runner never loads kernel/main.
import 'reflect-metadata';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request as undiciRequest } from 'undici';
import { buildConfig } from '../../kernel/config.js';
import { Kernel } from '../../kernel/kernel.js';
import type { Plugin } from '../../kernel/plugin.js';
import { HTTP_SERVER } from '../../plugins/http/index.js';
import { REALTIME } from '../../plugins/realtime/index.js';
import { SOURCES } from '../../plugins/sources/index.js';

export interface StartAppOptions {
  /** Stream definitions by id, written to streams/<id>.json. */
  streams?: Record<string, object>;
  /** Entries by stream id, written to streams/data/<id>/<key>.json. */
  data?: Record<string, Array<Record<string, unknown>>>;
  /** The key field of each data row (default `id`); rows without it get 1, 2, 3... */
  keyName?: string;
  /** Raw config, merged over `{ http: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' } }`. */
  config?: Record<string, unknown>;
  /** Extra plugin objects loaded after the configured ones. */
  plugins?: Plugin[];
  /** Extra files by path relative to the app root (string content, or an object written as JSON). */
  files?: Record<string, string | object>;
}

export interface TestResponse<Json = unknown> {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  json: Json;
}

export interface TestApp {
  url: string;
  kernel: Kernel;
  root: string;
  /** Send a request; an object body is sent as JSON (content-type set unless given). */
  request<Json = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse<Json>>;
  close(): Promise<void>;
}

function merge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = out[key];
    out[key] =
      value && typeof value === 'object' && !Array.isArray(value) && current && typeof current === 'object' && !Array.isArray(current)
        ? merge(current as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}

export async function startTestApp(options: StartAppOptions = {}): Promise<TestApp> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'streams-app-'));
  const write = (relative: string, content: string | object): void => {
    const file = path.join(root, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
  };
  mkdirSync(path.join(root, 'streams', 'data'), { recursive: true });
  for (const [id, definition] of Object.entries(options.streams ?? {})) write(`streams/${id}.json`, definition);
  const keyName = options.keyName ?? 'id';
  for (const [id, rows] of Object.entries(options.data ?? {})) {
    mkdirSync(path.join(root, 'streams', 'data', id), { recursive: true });
    rows.forEach((row, index) => write(`streams/data/${id}/${String(row[keyName] ?? index + 1)}.json`, row));
  }
  for (const [relative, content] of Object.entries(options.files ?? {})) write(relative, content);

  const raw = merge({ http: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' } }, options.config ?? {});
  let kernel: Kernel;
  try {
    kernel = new Kernel(buildConfig(raw, root), { plugins: options.plugins ?? [] });
    await kernel.boot();
    // Entries and the change history load after the boot, in the background (/readyz says
    // when): a test starts once they are served.
    await kernel.find(SOURCES)?.whenLoaded();
    await kernel.find(REALTIME)?.history.start();
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const url = kernel.get(HTTP_SERVER).url;

  return {
    url,
    kernel,
    root,
    async request(method, target, body, headers = {}) {
      const sendHeaders: Record<string, string> = { ...headers };
      let payload: string | undefined;
      if (body !== undefined) {
        if (typeof body === 'string') payload = body;
        else {
          payload = JSON.stringify(body);
          if (!Object.keys(sendHeaders).some((h) => h.toLowerCase() === 'content-type')) sendHeaders['content-type'] = 'application/json';
        }
      }
      const res = await undiciRequest(`${url}${target}`, { method: method as 'GET', headers: sendHeaders, body: payload });
      const text = await res.body.text();
      let json: unknown;
      try {
        json = text.length > 0 ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const flat: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      return { status: res.statusCode, headers: flat, text, json: json as never };
    },
    async close() {
      try {
        await kernel.shutdown();
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

// The source contract suite (issue #30): an addon's source type runs the cases ours run.
export { runSourceContract, contractDefinition, FILMS, type ContractMatchers, type ContractOptions, type ContractTestApi, type DiskEditor, type SourceHarness } from './source-contract.js';
