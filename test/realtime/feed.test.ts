/**
 * The change feed's history on disk (issues #19 and #26), over real files in a temp folder:
 * segment files bounded by bytes, age and count; a restarted feed honours the cursors it
 * handed out and refuses other servers'; memory holds places, not bodies; a history left
 * by an older version (one file, any size) is converted as a stream; a torn or oversized
 * line is dropped.
 */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync, openSync, closeSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChangeFeed, changeHead, KEPT_COST, type Change, type FeedLimits } from '../../plugins/realtime/feed.js';
import { page } from '../../plugins/realtime/replay.js';
import { memoryLogger } from '../helpers/logger.js';
import { silentLogger } from '../sources/harness.js';

const EVERYTHING = { key: '', accepts: () => true };
const MiB = 1024 * 1024;
const limits = (over: Partial<FeedLimits> = {}): FeedLimits => ({ count: 1000, maxAgeSeconds: 3600, maxBytes: 64 * MiB, memoryBytes: 8 * MiB, maxChangeBytes: 128 * 1024, ...over });
const folder = (): string => mkdtempSync(path.join(os.tmpdir(), 'feed-'));
const onDisk = (dir: string): number => readdirSync(dir).reduce((sum, name) => sum + statSync(path.join(dir, name)).size, 0);

/** Every kept change of `stream` after `cursor`, read back the way clients get them. */
async function replay(feed: ChangeFeed, stream: string, cursor: string | undefined): Promise<Change[]> {
  const after = feed.position(stream, cursor);
  return (await page(feed, stream, after, EVERYTHING, 1_000_000, Infinity)).changes;
}

describe('change feed history', () => {
  it('a restarted feed resumes from cursors of every earlier run, and refuses other servers and dropped streams', async () => {
    const dir = folder();
    const first = new ChangeFeed(dir, limits({ count: 2 }), silentLogger);
    await first.load();
    const early = first.publish('a', 'created', 1, '{"id":1}', { id: 1 });
    for (let i = 2; i <= 1200; i++) first.publish('b', 'updated', i, `{"id":${i}}`, { id: i });
    const lastOfFirst = first.publish('a', 'updated', 1, '{"id":1,"t":"x"}', { id: 1 });
    await first.close();

    const second = new ChangeFeed(dir, limits({ count: 2 }), silentLogger);
    await second.load();
    expect(second.latest).toBe(lastOfFirst.cursor);
    const [run, seq] = early.cursor.split('-');
    const both = await replay(second, 'a', `${run}-${Number(seq) - 1}`);
    expect(both.map((c) => c.seq)).toEqual([early.seq, lastOfFirst.seq]);
    expect(both[1]!.data).toBe('{"id":1,"t":"x"}');
    second.publish('a', 'deleted', 1, 'null', { id: 1 });
    await second.close();

    const third = new ChangeFeed(dir, limits({ count: 2 }), silentLogger);
    await third.load();
    expect((await replay(third, 'a', lastOfFirst.cursor)).map((c) => c.event)).toEqual(['deleted']);
    expect(() => third.position('a', `zz0other-${lastOfFirst.seq}`)).toThrow(expect.objectContaining({ status: 410 }));
    // Stream b kept its last two; a cursor before them is 410 with the oldest usable one.
    let gone: unknown;
    try {
      third.position('b', `${run}-5`);
    } catch (error) {
      gone = error;
    }
    expect(gone).toMatchObject({ status: 410, errors: [{ meta: { oldest: expect.stringMatching(/-\d+$/) } }] });
    third.drop('a');
    await third.close();
    const fourth = new ChangeFeed(dir, limits({ count: 2 }), silentLogger);
    await fourth.load();
    expect(await replay(fourth, 'a', undefined)).toEqual([]);
    expect(() => fourth.position('a', lastOfFirst.cursor)).toThrow(expect.objectContaining({ status: 410 }));
    await fourth.close();
  });

  it('stays within its byte budget on disk however large the changes, and memory holds places only', async () => {
    const dir = folder();
    const feed = new ChangeFeed(dir, limits({ maxBytes: 2 * MiB, maxChangeBytes: 512 * 1024 }), silentLogger);
    await feed.load();
    const body = JSON.stringify({ text: 'x'.repeat(200 * 1024) });
    let firstCursor = '';
    for (let i = 0; i < 200; i++) {
      const change = feed.publish('big', 'updated', 1, body, { id: 1 });
      if (i === 0) firstCursor = change.cursor;
      await feed.log.idle();
    }
    // 200 changes of ~400 KB (data + match) = 80 MB written; the budget plus one segment stays.
    expect(onDisk(dir)).toBeLessThan(2 * MiB + 512 * 1024 + 2 * 410 * 1024);
    expect(feed.report().index_bytes).toBe(feed.report().kept * KEPT_COST);
    expect(() => feed.position('big', firstCursor)).toThrow(expect.objectContaining({ status: 410 }));
    const kept = await replay(feed, 'big', undefined);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((c) => c.data === body)).toBe(true);
    await feed.close();
    // A restart reads it back within the budget.
    const again = new ChangeFeed(dir, limits({ maxBytes: 2 * MiB, maxChangeBytes: 512 * 1024 }), silentLogger);
    await again.load();
    expect((await replay(again, 'big', undefined)).length).toBe(kept.length);
    await again.close();
  });

  it('a change larger than max_change_bytes is kept as a reference, and memory holds its place, not its body', async () => {
    const dir = folder();
    const feed = new ChangeFeed(dir, limits({ maxChangeBytes: 4096 }), silentLogger);
    await feed.load();
    const big = feed.publish('s', 'created', 7, JSON.stringify({ id: 7, text: 'y'.repeat(10_000) }), { id: 7, text: 'y'.repeat(10_000) });
    expect(big.omitted).toBe(true);
    expect(big.data).toBe('null');
    expect(big.match).toBeNull();
    const [read] = await replay(feed, 's', undefined);
    expect(read).toMatchObject({ id: 7, data: 'null', omitted: true, cursor: big.cursor });
    await feed.close();
  });

  it('retention by memory: the index stays within memory_bytes', async () => {
    const feed = new ChangeFeed(folder(), limits({ memoryBytes: 64 * 1024 }), silentLogger);
    await feed.load();
    for (let i = 0; i < 5000; i++) {
      feed.publish(`s${i % 3}`, 'created', i, '{}', {});
      if (i % 500 === 0) await feed.log.idle();
    }
    await feed.log.idle();
    feed.publish('s0', 'created', -1, '{}', {});
    // The active segment may run over until it can go; never by more than itself.
    expect(feed.report().kept * KEPT_COST).toBeLessThan(2 * 64 * 1024 + 8 * 1024 * 1024 / 8);
    expect(feed.report().kept).toBeLessThan(5000);
    await feed.close();
  });

  it('converts an oversized history file of an older version as a stream, keeping its newest changes', async () => {
    const dir = folder();
    const legacy = path.join(dir, 'changes.jsonl');
    const fd = openSync(legacy, 'w');
    writeSync(fd, `${JSON.stringify({ run: 'oldrun1' })}\n`);
    const data = JSON.stringify(JSON.stringify({ text: 'z'.repeat(64 * 1024) }));
    // ~20 MB in one file (an older version kept everything); the budget here is 4 MiB.
    for (let seq = 1; seq <= 300; seq++) writeSync(fd, `{"cursor":"oldrun1-${seq}","seq":${seq},"stream":"s","event":"updated","id":1,"data":${data},"match":{"id":1},"at":${Date.now()}}\n`);
    writeSync(fd, '{"cursor":"oldrun1-301","seq":301,"str'); // torn by a crash
    closeSync(fd);
    const feed = new ChangeFeed(dir, limits({ maxBytes: 4 * MiB }), silentLogger);
    await feed.load();
    expect(readdirSync(dir)).not.toContain('changes.jsonl');
    expect(onDisk(dir)).toBeLessThanOrEqual(4 * MiB + 4096);
    expect(feed.latest).toBe('oldrun1-300');
    const kept = await replay(feed, 's', undefined);
    expect(kept.at(-1)!.seq).toBe(300);
    expect(kept.length).toBeLessThan(300);
    // Resuming from a cursor in the part left behind answers 410; from a kept one, the rest.
    expect(() => feed.position('s', 'oldrun1-5')).toThrow(expect.objectContaining({ status: 410 }));
    expect((await replay(feed, 's', 'oldrun1-298')).map((c) => c.seq)).toEqual([299, 300]);
    await feed.close();
  });

  it('a torn last line and a line over the limit in a segment are dropped, the rest is read', async () => {
    const dir = folder();
    const feed = new ChangeFeed(dir, limits({ maxChangeBytes: 1024 }), silentLogger);
    await feed.load();
    feed.publish('s', 'created', 1, '{"id":1}', { id: 1 });
    await feed.close();
    const segment = readdirSync(dir).find((n) => n.startsWith('changes-'))!;
    appendFileSync(path.join(dir, segment), `{"cursor":"x-2","seq":2,"stream":"s","data":"${'q'.repeat(100_000)}"}\n{"cursor":"x-3","se`);
    const again = new ChangeFeed(dir, limits({ maxChangeBytes: 1024 }), silentLogger);
    await again.load();
    expect((await replay(again, 's', undefined)).map((c) => c.id)).toEqual([1]);
    again.publish('s', 'updated', 1, '{"id":1}', { id: 1 });
    await again.close();
    // The next boot appends to a new segment: nothing is glued to the torn line.
    const third = new ChangeFeed(dir, limits({ maxChangeBytes: 1024 }), silentLogger);
    await third.load();
    expect((await replay(third, 's', undefined)).map((c) => c.event)).toEqual(['created', 'updated']);
    await third.close();
    writeFileSync(path.join(dir, 'unrelated.txt'), 'left alone');
  });
});

describe('a boot reads a change line by its head and tail (issue #33)', () => {
  it('finds what a full parse finds in every line publish writes', async () => {
    const dir = folder();
    const feed = new ChangeFeed(dir, limits({ maxChangeBytes: 64 }), silentLogger);
    await feed.load();
    // An "at" inside the attributes, quotes and a backslash in the data, a change too large to keep (omitted), an update with its version before.
    feed.publish('s', 'created', 'a"b', '{"id":"a\\"b","note":",\\"at\\":1}"}', { id: 'a"b', at: 5, note: ',"at":1}' });
    feed.publish('s', 'updated', 1, `{"id":1,"text":"${'x'.repeat(100)}"}`, { id: 1 });
    feed.publish('s', 'updated', 2, '{"id":2}', { id: 2 }, { id: 2, at: 7 });
    feed.publish('t', 'deleted', 3, 'null', { id: 3 });
    await feed.close();
    const lines = readdirSync(dir).flatMap((name) => readFileSync(path.join(dir, name), 'utf8').split('\n').filter((l) => l.length > 0));
    const changes = lines.filter((l) => l.startsWith('{"cursor"'));
    expect(changes).toHaveLength(4);
    for (const line of changes) {
      const whole = JSON.parse(line) as { cursor: string; seq: number; stream: string; at: number };
      expect(changeHead(line)).toEqual({ cursor: whole.cursor, seq: whole.seq, stream: whole.stream, at: whole.at });
    }
    // Segment headers and floors, and anything not in publish's exact shape, are parsed whole.
    for (const line of lines.filter((l) => !l.startsWith('{"cursor"'))) expect(changeHead(line)).toBeUndefined();
    const seen = '{"cursor":"r1-5","seq":5,"stream":"s","event":"created","id":1,"data":"{}","match":{},"at":9}';
    expect(changeHead(seen)).toEqual({ cursor: 'r1-5', seq: 5, stream: 's', at: 9 });
    for (const other of [
      seen.replace('"stream":"s"', '"stream":"s\\u0041"'),
      seen.replace('"seq":5', '"seq":5.5'),
      seen.replace('"seq":5', '"seq":1234567890123456'),
      seen.replace('"at":9}', '"at":9 }'),
      seen.replace('"at":9}', '"at":9,"other":1}'),
      seen.replace('"at":9}', '"at":}'),
      seen.slice(0, -1),
      ` ${seen}`,
    ]) {
      expect(changeHead(other)).toBeUndefined();
    }
  });

  it('a line damaged in its middle is passed over by a replay, as a boot that parsed it whole passed it over', async () => {
    const dir = folder();
    const first = new ChangeFeed(dir, limits(), silentLogger);
    await first.load();
    for (let id = 1; id <= 3; id++) first.publish('s', 'created', id, `{"id":${id},"title":"title ${id}"}`, { id, title: `title ${id}` });
    await first.close();
    const [segment] = readdirSync(dir).filter((n) => n.startsWith('changes-'));
    const file = path.join(dir, segment!);
    const text = readFileSync(file, 'utf8');
    // Same length, head and tail intact: the second change's body is no longer JSON.
    const at = text.indexOf('"title":"title 2"}');
    writeFileSync(file, text.slice(0, at) + '\u0000'.repeat(8) + text.slice(at + 8));
    const { logger, lines: logged } = memoryLogger('warn');
    const second = new ChangeFeed(dir, limits(), logger);
    await second.load();
    expect((await replay(second, 's', undefined)).map((c) => c.id)).toEqual([1, 3]);
    expect(logged).toEqual([expect.objectContaining({ seq: 2, path: file, msg: 'a change of the history cannot be read: it is skipped' })]);
    // A client past the damaged change goes on from the next one, and the feed from the last.
    const next = second.publish('s', 'created', 4, '{"id":4}', { id: 4 });
    expect(next.seq).toBe(4);
    await second.close();
  });
});
