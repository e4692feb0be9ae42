/**
 * A `database` stream's source that closes (its stream deleted or its source redefined) is no
 * longer among the followed changes: its closures kept the closed source alive and its
 * database among those a node polls for shared webhook deliveries. On the wire stand-in (the
 * real `mongodb` driver against test/wire/server.ts); nothing here needs a real server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FollowedChanges, MONGODB_CHANGES } from '../../plugins/mongodb/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { until } from '../realtime/clients.js';
import { ON_WIRE, WireServer } from '../wire/server.js';

const films = { fields: { id: 'integer', title: 'string' }, config: { source: { type: 'database' } } };
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function node(): Promise<TestApp> {
  const server = await new WireServer().start();
  closing.push(() => server.close());
  const app = await startApp({
    streams: { films },
    config: {
      http: { transport: 'node' },
      plugins: [{ name: 'mongodb', options: { connect_wait_ms: 2000, retry_initial_ms: 50, retry_max_ms: 300 } }],
      mongodb: { connections: { default: { url: server.url(), database: 'streams', options: { serverSelectionTimeoutMS: 1000 } } } },
    },
  });
  closing.push(() => app.close());
  // The source opens at boot (its preload); its follower opens the change stream once connected.
  await until(() => app.kernel.get(MONGODB_CHANGES).isFollowing('films'), 5000);
  return app;
}

describe(`followed changes of closed sources ${ON_WIRE}`, () => {
  it('a deleted stream is no longer followed: no coverage, no replay, its database no longer polled', async () => {
    const app = await node();
    const changes = app.kernel.get(MONGODB_CHANGES);
    expect(changes.followedDatabases()).toHaveLength(1);
    expect((await app.request('DELETE', '/api/streams/films')).status).toBe(204);
    await until(() => !changes.isFollowing('films'), 5000);
    expect(changes.replay('films', { high: 1, low: 0 })).toBeUndefined();
    expect(changes.followedDatabases()).toEqual([]);
  });

  it('a redefined stream is followed by its new source once the old one closed', async () => {
    const app = await node();
    const changes = app.kernel.get(MONGODB_CHANGES);
    // Another collection: the old source closes at the redefinition, the new one opens at the next
    // use (the opposite order, which the unfollow's guard is for, is the direct case below).
    const put = await app.request('PUT', '/api/streams/films', { ...films, config: { source: { type: 'database', table: 'films_v2' } } });
    expect(put.status).toBe(200);
    expect((await app.request('POST', '/api/streams/films/entries', { id: 1, title: 'Alien' })).status).toBe(201);
    await until(() => changes.isFollowing('films'), 5000);
    // The new source reads its collection's history (what it finds there is not the point).
    const replay = changes.replay('films', { high: 1, low: 0 });
    expect(replay).toBeInstanceOf(Promise);
    await replay?.catch(() => undefined);
    expect(changes.followedDatabases()).toHaveLength(1);
  });

  it('an old source closing after its successor registered leaves the successor followed', async () => {
    const changes = new FollowedChanges();
    const replay = (): Promise<never> => Promise.reject(new Error('not read here'));
    const closeOld = changes.following('films', () => undefined, () => ({ epoch: 1, from: undefined }), replay);
    const closeNew = changes.following('films', () => undefined, () => ({ epoch: 2, from: undefined }), replay);
    closeOld();
    expect(changes.isFollowing('films')).toBe(true);
    closeNew();
    expect(changes.isFollowing('films')).toBe(false);
  });
});
