/**
 * The change feed's history file (issue #19 item 1) over a real file in a temp folder:
 * compaction keeps it bounded, and after it a restarted feed still honours the cursors it
 * handed out (its runs survive compaction) and refuses other servers' cursors.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../plugins/realtime/feed.js';
import { silentLogger } from '../sources/harness.js';

const lines = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('change feed history file', () => {
  it('is compacted to what is kept, and a restarted feed resumes from cursors of every earlier run', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'feed-')), 'changes.jsonl');
    const limits = { count: 2, maxAgeSeconds: 3600 };
    const first = new ChangeFeed(file, limits, silentLogger);
    await first.load();
    const early = first.publish('a', 'created', 1, '{"id":1}', { id: 1 });
    for (let i = 2; i <= 1200; i++) first.publish('b', 'updated', i, `{"id":${i}}`, { id: i });
    const lastOfFirst = first.publish('a', 'updated', 1, '{"id":1}', { id: 1 });
    await first.close(); // waits for the compaction too
    expect(lines(file).length).toBeLessThan(1200);

    const second = new ChangeFeed(file, limits, silentLogger);
    await second.load();
    expect(second.latest).toBe(lastOfFirst.cursor);
    // Stream a kept both of its changes: from before the first one, both are replayed.
    const [run, seq] = early.cursor.split('-');
    expect(second.resume('a', `${run}-${Number(seq) - 1}`).replay.map((c) => c.seq)).toEqual([early.seq, lastOfFirst.seq]);
    second.publish('a', 'deleted', 1, 'null', { id: 1 });
    await second.close();

    // A third boot: cursors of the first run (whose changes of `b` were compacted away) still mean something.
    const third = new ChangeFeed(file, limits, silentLogger);
    await third.load();
    expect(third.resume('a', lastOfFirst.cursor).replay.map((c) => c.event)).toEqual(['deleted']);
    expect(() => third.resume('a', `zz0other-${lastOfFirst.seq}`)).toThrow(expect.objectContaining({ status: 410 }));
    // Stream b kept its last two; a cursor before them is 410 with the oldest usable one.
    expect(() => third.resume('b', `${run}-5`)).toThrow(expect.objectContaining({ status: 410 }));
    // A deleted stream's changes stay gone after a restart (the file still holds their lines).
    third.drop('a');
    await third.close();
    const fourth = new ChangeFeed(file, limits, silentLogger);
    await fourth.load();
    expect(fourth.kept('a')).toEqual([]);
    expect(() => fourth.resume('a', lastOfFirst.cursor)).toThrow(expect.objectContaining({ status: 410 }));
    await fourth.close();
  });
});
