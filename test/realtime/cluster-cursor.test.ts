/**
 * Cluster cursors of `database` streams (issue #29 item 6), in the feed alone (no server):
 * the same change gets the same cursor on every node (cluster time and ordinal), a node
 * resumes a client from a cursor it kept, one ahead of what it has read yet (its follower
 * lags) skips those changes when they arrive, and one older than its coverage is a 410.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClusterChanges, Ordinals, type ClusterChangesDeps } from '../../plugins/realtime/cluster-changes.js';
import type { FollowedChange } from '../../plugins/mongodb/index.js';
import { clusterCursor } from '../../plugins/realtime/cluster-cursor.js';
import { ChangeFeed, deliverable, type Change, type FeedLimits } from '../../plugins/realtime/feed.js';
import { resumeAt } from '../../plugins/realtime/replay.js';
import { silentLogger } from '../sources/harness.js';

const MiB = 1024 * 1024;
const limits: FeedLimits = { count: 1000, maxAgeSeconds: 3600, maxBytes: 64 * MiB, memoryBytes: 8 * MiB, maxChangeBytes: 128 * 1024 };
const EVERYTHING = { key: '', accepts: () => true };

async function node(): Promise<ChangeFeed> {
  const feed = new ChangeFeed(mkdtempSync(path.join(os.tmpdir(), 'cluster-feed-')), limits, silentLogger);
  await feed.load();
  return feed;
}

describe('cluster cursors (no server)', () => {
  it('order the changes as the replica set does; a transaction\'s changes (one cluster time) get ordinals', () => {
    const ordinals = new Ordinals();
    const a = ordinals.cursorOf('films', { high: 1767225600, low: 9 });
    const b = ordinals.cursorOf('films', { high: 1767225600, low: 10 });
    const c = ordinals.cursorOf('films', { high: 1767225600, low: 10 });
    const d = ordinals.cursorOf('films', { high: 1767225601, low: 1 });
    expect([a, b, c, d]).toEqual([clusterCursor({ high: 1767225600, low: 9 }, 0), clusterCursor({ high: 1767225600, low: 10 }, 0), clusterCursor({ high: 1767225600, low: 10 }, 1), clusterCursor({ high: 1767225601, low: 1 }, 0)]);
    expect([d, c, a, b].sort()).toEqual([a, b, c, d]);
  });

  it('a cursor ahead of what a lagging node has read: the changes up to it are skipped when they come; older than its coverage: 410', async () => {
    const at = (i: number): string => clusterCursor({ high: 1767225600, low: i }, 0);
    const ahead = await node();
    const behind = await node();
    for (const feed of [ahead, behind]) feed.cover('films', clusterCursor({ high: 1767225600, low: 1 }, 0xffff));
    for (let i = 2; i <= 5; i++) ahead.publish('films', 'created', i, `{"id":${i}}`, { id: i }, undefined, at(i));
    for (let i = 2; i <= 3; i++) behind.publish('films', 'created', i, `{"id":${i}}`, { id: i }, undefined, at(i));
    // The client saw up to 5 on the node ahead, and comes to the one behind.
    const { after, filter } = resumeAt(behind, 'films', at(5), EVERYTHING, 'head');
    const got: Change[] = [];
    behind.subscribe('films', filter, (change) => got.push(change));
    expect(behind.after('films', after, 100)).toEqual([]);
    for (let i = 4; i <= 6; i++) {
      const change = behind.publish('films', 'created', i, `{"id":${i}}`, { id: i }, undefined, at(i));
      expect(deliverable(filter, change) !== undefined).toBe(i === 6);
    }
    expect(got.map((c) => c.cursor)).toEqual([at(6)]);
    // A cursor in the middle resumes right after it.
    const middle = resumeAt(ahead, 'films', at(3), EVERYTHING, 'head');
    expect(ahead.after('films', middle.after, 100).map((k) => k.pos)).toEqual([at(4), at(5)]);
    // Older than what the node followed: 410 (the database's history is read back instead, when the mongodb plugin is there).
    expect(() => ahead.clusterPosition('films', at(1))).toThrow(expect.objectContaining({ status: 410 }));
    await ahead.close();
    await behind.close();
  });

  it('a listener attached after its follower run began trusts the history only from the first change it saw (it may have missed earlier ones)', async () => {
    const feed = await node();
    const deps = {
      feed,
      registry: () => ({ get: () => ({ id: 'films', config: { key_name: 'id' } }) }),
      entries: () => ({ toJson: (_d: unknown, entry: unknown) => JSON.stringify(entry) }),
      server: {},
      outbox: { enqueue: async () => undefined },
      keepBefore: false,
      logger: silentLogger,
    } as unknown as ClusterChangesDeps;
    const run = { epoch: 1, from: { high: 1767225600, low: 1 } } as FollowedChange['coverage'];
    const change = (low: number, inRun: number): FollowedChange =>
      ({ stream: 'films', collection: 'films', operationType: 'insert', key: low, origin: 'remote', position: { token: {}, clusterTime: { high: 1767225600, low } }, entry: { id: low }, coverage: run, db: undefined, inRun }) as unknown as FollowedChange;
    const at = (i: number): string => clusterCursor({ high: 1767225600, low: i }, 0);
    // Attached in time: the whole run (from its start) is trusted.
    const onTime = new ClusterChanges(deps);
    onTime.handle(change(3, 1));
    expect(feed.beforeCoverage('films', at(2))).toBe(false);
    // Attached late (the run's third change is the first it sees): only from that change on.
    const late = await node();
    new ClusterChanges({ ...deps, feed: late }).handle(change(5, 3));
    expect(late.beforeCoverage('films', at(4))).toBe(true);
    expect(late.beforeCoverage('films', at(5))).toBe(false);
    await feed.close();
    await late.close();
  });
});
