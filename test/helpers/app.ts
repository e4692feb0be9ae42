/**
 * Shared test helper: boot a whole app in-process over real HTTP. It is the public
 * `streams-kernel/testing` helper (plugins/addon/testing.ts) with `json` typed loosely,
 * because tests read deep paths (`res.json.data.name`) and `expect` does the checking.
 *
 *   const app = await startApp({ streams: {...}, data: {...}, config: {...}, plugins: [...] });
 *   const res = await app.request('GET', '/api/streams/planets/entries/1');
 *   await app.close();
 *
 * Every answer under `/api/` is also checked against the app's own live OpenAPI document
 * (test/openapi/contract.ts): the whole HTTP suite is the contract test of `/api/openapi.json`
 * (issue #18). `STREAMS_CONTRACT=0` turns the check off, to tell a contract failure apart.
 */
import { startTestApp, type StartAppOptions, type TestApp as PublicTestApp, type TestResponse as PublicResponse } from '../../plugins/addon/testing.js';
import { contractChecked } from '../openapi/contract.js';

export type { StartAppOptions };
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read deep envelope paths; `expect` does the checking
export type TestResponse = PublicResponse<any>;
export interface TestApp extends Omit<PublicTestApp, 'request'> {
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
}

export async function startApp(options: StartAppOptions = {}): Promise<TestApp> {
  const app = (await startTestApp(options)) as TestApp;
  return process.env.STREAMS_CONTRACT === '0' ? app : contractChecked(app);
}
