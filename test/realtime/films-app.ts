/** The app every realtime suite runs: a `films` stream with a protected field and one entry. */
import { startApp, type StartAppOptions, type TestApp } from '../helpers/app.js';
import { cleanups } from './clients.js';

export const films = {
  fields: { id: 'integer', title: 'string', year: 'integer', secret: { type: 'string', protected: true } },
};

/** Boot the films app on `transport` (closed by the suite's cleanups). */
export async function boot(transport: string, config: Record<string, unknown> = {}, extra: StartAppOptions = {}): Promise<TestApp> {
  const app = await startApp({ streams: { films }, data: { films: [{ id: 1, title: 'Alien', year: 1979 }] }, config: { http: { transport }, ...config }, ...extra });
  cleanups.push(() => app.close());
  return app;
}
