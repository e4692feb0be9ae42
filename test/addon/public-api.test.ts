import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import * as vitest from 'vitest';
import { describe, expect, it } from 'vitest';
import * as addon from '../../plugins/addon/index.js';
import * as testing from '../../plugins/addon/testing.js';

/**
 * The addon API is a semver promise: this list is its runtime surface. Removing or
 * renaming an export fails here; adding one means adding it here (and to docs/addons.md).
 */
const RUNTIME_EXPORTS = [
  'API', 'API_MIDDLEWARE', 'APP_ROOT', 'ApiGate', 'accessOf', 'AppError', 'BadRequestError', 'CONFIG', 'checkMiddleware', 'ENTRIES', 'FIELDS',
  'HOOKS', 'HOOK_NAMES', 'HTTP_SERVER', 'Hooks', 'KeyedLock', 'LOGGER', 'MemorySource', 'NotFoundError', 'SOURCES',
  'STREAM_REGISTRY', 'STREAM_ROUTES', 'SingleFileStore', 'ValidationError', 'assertFileKey', 'compareEntries',
  'definePlugin', 'definitionToJson', 'fieldOf', 'isAppError', 'matchesWhere', 'removeFileDurable', 'resolveInRoot',
  'defineSettings', 'serviceRef', 'writeFileDurable', 'EXTENSIONS', 'RegistrationError',
];

describe('streams-kernel/addon', () => {
  it('exports exactly the documented runtime surface', () => {
    expect(Object.keys(addon).sort()).toEqual([...RUNTIME_EXPORTS].sort());
  });

  it('names every hook point', () => {
    expect(addon.HOOK_NAMES).toEqual(expect.arrayContaining(['definition.extend', 'entry.creating', 'entry.deleted', 'request.handled']));
    expect(addon.HOOK_NAMES).toHaveLength(15);
  });

  it('uses global symbols for tokens, so an addon with its own copy of the package resolves the same services', () => {
    for (const token of [addon.API, addon.API_MIDDLEWARE, addon.CONFIG, addon.ENTRIES, addon.FIELDS, addon.HOOKS, addon.HTTP_SERVER, addon.LOGGER, addon.SOURCES, addon.STREAM_REGISTRY, addon.STREAM_ROUTES]) {
      expect(typeof token).toBe('symbol');
      expect(Symbol.keyFor(token as symbol)).toMatch(/^streams-kernel:/);
    }
  });
});

/** Every name `plugins/addon/index.ts` exports, values and types, read from its export lists. */
function exportedNames(): string[] {
  const source = readFileSync(path.join(import.meta.dirname, '../../plugins/addon/index.ts'), 'utf8');
  const names = new Set<string>();
  for (const match of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of match[1]!.split(',')) {
      const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()!.trim();
      if (name) names.add(name);
    }
  }
  return [...names].sort();
}

describe('docs/addons.md, "The public API"', () => {
  it('lists every export of streams-kernel/addon, values and types', () => {
    const doc = readFileSync(path.join(import.meta.dirname, '../../docs/addons.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## 8. The public API'));
    const listed = new Set([...section.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)].map((m) => m[0]));
    const names = exportedNames();
    expect(names.length).toBeGreaterThan(80);
    expect(names.filter((name) => !listed.has(name))).toEqual([]);
  });
});

describe('streams-kernel/testing', () => {
  it('exports startTestApp', () => {
    expect(Object.keys(testing).sort()).toEqual(['FILMS', 'contractDefinition', 'runSourceContract', 'startTestApp']);
  });
});

describe('streams-kernel/testing: the source contract suite', () => {
  // An addon's source type runs the cases ours run, through the SDK (issue #30 item 6): here
  // a source written the way an addon author would, on the public MemorySource building block.
  testing.runSourceContract(vitest, 'an addon-style in-memory source', async () => ({
    create: async (definition) => new addon.MemorySource(definition, silent, addonStore()),
    cleanup: async () => undefined,
  }), { source: { type: 'addon-memory' } });
});

const silent = pino({ level: 'silent' });

/** The store of an addon's source kept nowhere (as the built-in `collection`). */
function addonStore(): addon.EntryStore {
  return {
    type: 'addon-memory',
    persistent: false,
    load: async (): Promise<addon.Entry[]> => [],
    put: async () => {},
    delete: async () => {},
    truncate: async () => {},
  };
}
