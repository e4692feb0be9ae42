import { afterEach, describe, expect, it } from 'vitest';
import { AppError, definePlugin, injectStorageFault, STORAGE_HEALTH } from '../../kernel/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * Issue #13 item 8: a full or read-only data folder is a 503 naming the cause, with
 * Retry-After, and /readyz is not ready until a write succeeds again. The errno is injected
 * at the durable-write layer (as root, chmod cannot make a folder unwritable here).
 */
let app: TestApp | undefined;
afterEach(async () => {
  injectStorageFault(undefined);
  await app?.close();
  app = undefined;
});

describe('storage faults', () => {
  it.each([
    ['ENOSPC', /the data folder is full/],
    ['EROFS', /read-only file system/],
  ])('%s: 503 with Retry-After and the cause, readyz out until a write succeeds', async (code, cause) => {
    app = await startApp({ streams: { notes: { fields: { id: 'integer', text: 'string' } } } });
    expect((await app.request('GET', '/readyz')).status).toBe(200);
    injectStorageFault(code);
    const failed = await app.request('POST', '/api/streams/notes/entries', { text: 'x' });
    expect(failed.status).toBe(503);
    expect(failed.headers['retry-after']).toBe('30');
    expect(failed.json.errors[0].message).toMatch(cause);
    expect(failed.text).not.toMatch(/\/tmp\/|streams-app-/);
    const ready = await app.request('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json.checks.storage).toBe(false);
    expect((await app.request('GET', '/api/streams/notes/entries')).json.meta.total).toBe(0);
    injectStorageFault(undefined);
    expect((await app.request('POST', '/api/streams/notes/entries', { text: 'y' })).status).toBe(201);
    expect((await app.request('GET', '/readyz')).status).toBe(200);
  });
});

describe('storage health is per kernel (#30)', () => {
  let other: TestApp | undefined;
  afterEach(async () => {
    await other?.close();
    other = undefined;
  });

  it('a fault in one kernel\'s data folder leaves another kernel in the same process ready and writing', async () => {
    const streams = { notes: { fields: { id: 'integer', text: 'string' } } };
    app = await startApp({ streams });
    other = await startApp({ streams });
    app.kernel.get(STORAGE_HEALTH).inject('ENOSPC');
    expect((await app.request('POST', '/api/streams/notes/entries', { text: 'x' })).status).toBe(503);
    expect((await app.request('GET', '/readyz')).status).toBe(503);
    expect((await other.request('GET', '/readyz')).status).toBe(200);
    expect((await other.request('POST', '/api/streams/notes/entries', { text: 'y' })).status).toBe(201);
    expect(other.kernel.get(STORAGE_HEALTH).faults()).toBe(0);
    expect(app.kernel.get(STORAGE_HEALTH).faults()).toBe(1);
    app.kernel.get(STORAGE_HEALTH).inject(undefined);
  });
});

describe('internal detail', () => {
  it('a 500 never carries its message, path or stack: the client gets a request id, the log the rest', async () => {
    const leaky = definePlugin({
      name: 'leaky',
      register({ hooks }) {
        hooks.on('entry.creating', () => {
          throw new AppError(500, 'cannot open /srv/app/secret/config.json');
        });
      },
    });
    app = await startApp({ plugins: [leaky], streams: { notes: { fields: { id: 'integer' } } } });
    const res = await app.request('POST', '/api/streams/notes/entries', {});
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('/srv/app');
    expect(res.json.errors).toEqual([{ message: 'Internal Server Error' }]);
    expect(res.headers['x-request-id']).toMatch(/\S/);
  });
});
