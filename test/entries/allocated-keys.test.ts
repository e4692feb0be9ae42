import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, type Logger, type Plugin } from '../../kernel/index.js';
import { MemorySource, SOURCES, type Entry } from '../../plugins/sources/index.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * A source that allocates increment keys itself (as the MongoDB source does with a
 * counters collection shared by every node): the entries layer must use its numbers,
 * never its own in-memory max + 1, or two nodes would hand out the same key.
 */
let next = 1000;
class AllocatingSource extends MemorySource {
  constructor(definition: StreamDefinition, logger: Logger) {
    super(definition, logger, {
      type: 'allocating',
      persistent: false,
      load: async (): Promise<Entry[]> => [{ id: 1, title: 'existing' }],
      put: async () => {},
      delete: async () => {},
      truncate: async () => {},
    });
  }

  async allocateIntegerKey(): Promise<number> {
    return next++;
  }
}

const allocating: Plugin = definePlugin({
  name: 'allocating-source',
  requires: ['sources'],
  register({ use, logger }) {
    use(SOURCES).registerType('allocating', ({ definition }) => new AllocatingSource(definition, logger));
  },
});

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('increment keys from a source that allocates them', () => {
  it('takes each new key from allocateIntegerKey', async () => {
    app = await startApp({
      streams: { notes: { config: { source: { type: 'allocating' } }, fields: { id: 'integer', title: 'string' } } },
      plugins: [allocating],
    });
    const first = await app.request('POST', '/api/streams/notes/entries', { title: 'a' });
    const second = await app.request('POST', '/api/streams/notes/entries', { title: 'b' });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect([first.json.data.id, second.json.data.id]).toEqual([1000, 1001]);
  });

  it('still takes them when the stream caches its query results (config.cache)', async () => {
    next = 2000;
    app = await startApp({
      streams: { notes: { config: { source: { type: 'allocating' }, cache: { enabled: true } }, fields: { id: 'integer', title: 'string' } } },
      plugins: [allocating],
    });
    const created = await app.request('POST', '/api/streams/notes/entries', { title: 'a' });
    expect(created.json.data.id).toBe(2000);
  });
});

describe('unique under concurrent writes', () => {
  it('lets exactly one of several simultaneous creates with the same unique value through', async () => {
    app = await startApp({ streams: { users: { fields: { id: 'integer', email: { type: 'email', unique: true } } } } });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => app!.request('POST', '/api/streams/users/entries', { email: 'same@example.com' })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect((await app.request('GET', '/api/streams/users/entries')).json.meta.total).toBe(1);
  });
});
