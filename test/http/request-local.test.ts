import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { HTTP_SERVER } from '../../plugins/http/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

/** `request.local(name)`: one value of `locals`, read without making the object (issue #33). */
describe('request.local', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('reads what was put in locals, and undefined before anything was', async () => {
    const addon = definePlugin({
      name: 'locals-reader',
      requires: ['http'],
      register({ use }) {
        use(HTTP_SERVER).route('GET', '/locals', (req) => {
          const before = req.local('seen') ?? null;
          req.locals.seen = 'yes';
          return { status: 200, body: JSON.stringify({ before, after: req.local('seen'), given: req.local('given') ?? null }) };
        });
      },
    });
    app = await startApp({ plugins: [addon] });
    // Over the socket (uWS or node:http, as the suite runs).
    expect((await app.request('GET', '/locals')).json).toEqual({ before: null, after: 'yes', given: null });
    // Through `inject`, whose caller hands locals in.
    const injected = await app.kernel.get(HTTP_SERVER).inject({ method: 'GET', path: '/locals', locals: { given: 7 } });
    expect(JSON.parse(String(injected.body))).toEqual({ before: null, after: 'yes', given: 7 });
  });
});
