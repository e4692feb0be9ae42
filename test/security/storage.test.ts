import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Issue #13 item 4: a definition cannot reach outside its own storage. */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const streams = {
  accounts: { fields: { id: 'integer', email: { type: 'email', required: true, unique: true } } },
  ledger: { config: { source: { type: 'file', format: 'json' } }, fields: { id: 'integer', amount: 'integer' } },
};
const data = { accounts: [{ id: 1, email: 'a@example.com' }] };

describe('definitions written over the API', () => {
  it("cannot alias another stream's folder or file, nor a folder holding them", async () => {
    app = await startApp({ streams, data, files: { 'streams/data/ledger.json': '[{"id":1,"amount":5}]' } });
    const attempts: Array<[Record<string, unknown>, RegExp]> = [
      [{ type: 'filebase', path: 'streams/data/accounts' }, /share the storage of stream \[accounts\]/],
      [{ type: 'filebase', path: 'streams/data' }, /share the storage of stream \[(accounts|ledger)\]/],
      [{ type: 'file', file: 'streams/data/ledger.json' }, /share the storage of stream \[ledger\]/],
      [{ type: 'filebase', path: '../outside' }, /inside the application root/],
      [{ type: 'filebase', path: '/etc' }, /inside the application root/],
    ];
    for (const [source, message] of attempts) {
      const res = await app.request('POST', '/api/streams', { id: 'alias', config: { source }, fields: { id: 'integer' } });
      expect(res.status, JSON.stringify(source)).toBe(409);
      expect(res.json.errors.map((e: { message: string }) => e.message).join(' '), JSON.stringify(source)).toMatch(message);
    }
    // Nothing was written through an alias: the accounts' rules still hold.
    expect((await app.request('GET', '/api/streams/accounts/entries')).json.meta.total).toBe(1);
    expect((await app.request('POST', '/api/streams', { id: 'fresh', fields: { id: 'integer' } })).status).toBe(201);
  });

  it('imports stay inside the definitions folder, and an import error never quotes the file', async () => {
    app = await startApp({ streams, data, files: { 'secrets.json': '{"token": "s3cr3t-value", broken' } });
    const outside = await app.request('POST', '/api/streams', { id: 'leak', fields: '@secrets.json' });
    expect(outside.status).toBe(409);
    expect(outside.text).not.toContain('s3cr3t');
    expect(outside.json.errors[0].message).toMatch(/must stay inside the definitions folder/);
  });

  it('a definition file with an import that does not parse names the file, not its content', async () => {
    const error = await startApp({ streams: { bad: { fields: '@fields/broken.json' } }, files: { 'fields/broken.json': '{"password": "hunter2" oops' } }).then(
      (started) => {
        app = started;
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/import "@fields\/broken.json" is not valid JSON/);
    expect(error?.message).not.toContain('hunter2');
  });
});
