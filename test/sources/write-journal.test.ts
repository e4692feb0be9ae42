import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { SPARE_FOLDER } from '../../kernel/index.js';
import { createSourceRegistry, type Entry } from '../../plugins/sources/index.js';
import { parseJournal, WriteJournal, type ReplayedWrite } from '../../plugins/sources/write-journal.js';
import { field, makeDefinition } from './definitions.js';
import { configFor, silentLogger, tempRoot } from './harness.js';

/**
 * The filebase write journal (issue #33, group commit): a batch is durable once its journal
 * append is flushed; the entry files follow without a flush of their own. These tests write
 * journals as a crash leaves them (real files in a temp folder, the documented record format)
 * and open the stream again through the real source registry: the load must put back every
 * journaled write the files lost, keep a file edited on disk after the write, and remove the
 * journal. The SIGKILL burst (crash.test.ts) covers a real process killed mid-write.
 */

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

const write = (name: string, text: string): Buffer => {
  const bytes = Buffer.from(text);
  return Buffer.concat([Buffer.from(`W ${crc32(bytes, crc32(name))} ${JSON.stringify(name)} ${bytes.byteLength}\n`), bytes, Buffer.from('\n')]);
};
const removal = (name: string): Buffer => Buffer.from(`R ${crc32(name)} ${JSON.stringify(name)}\n`);
const doneNote = (name: string, file?: string): Buffer => {
  if (file === undefined) return Buffer.from(`A ${JSON.stringify([name])}\n`);
  const st = statSync(file);
  return Buffer.from(`A ${JSON.stringify([name, st.ino, st.size, st.mtimeMs])}\n`);
};

async function folderWith(files: Record<string, unknown>): Promise<{ root: string; folder: string }> {
  const root = await tempRoot('journal-');
  roots.push(root);
  const folder = path.join(root, 'streams/data/notes');
  mkdirSync(folder, { recursive: true });
  for (const [name, entry] of Object.entries(files)) writeFileSync(path.join(folder, name), JSON.stringify(entry));
  return { root, folder };
}

function open(root: string) {
  return createSourceRegistry(configFor(root), root, silentLogger).for(makeDefinition('notes', { source: { type: 'filebase', format: 'json' }, fields: [field('id', 'integer'), field('text', 'string')] }));
}

const hidden = (folder: string): string[] => readdirSync(folder).filter((name) => name.startsWith('.'));

describe('filebase write journal: the load after a crash', () => {
  it('puts back a write the file lost (the rename never reached the disk), and removes the journal', async () => {
    const { root, folder } = await folderWith({ '1.json': { id: 1, text: 'old' } });
    writeFileSync(path.join(folder, '.streams-journal.1.1.test'), write('1.json', JSON.stringify({ id: 1, text: 'acknowledged' })));
    const source = open(root);
    expect(await source.get(1)).toEqual({ id: 1, text: 'acknowledged' });
    expect(JSON.parse(readFileSync(path.join(folder, '1.json'), 'utf8'))).toEqual({ id: 1, text: 'acknowledged' });
    expect(hidden(folder)).toEqual([]);
    await source.close();
  });

  it('puts back a created file that is missing, and a removal whose file is still there', async () => {
    const { root, folder } = await folderWith({ '2.json': { id: 2, text: 'removed through the API' } });
    writeFileSync(path.join(folder, '.streams-journal.1.1.test'), Buffer.concat([write('3.json', JSON.stringify({ id: 3, text: 'created' })), removal('2.json')]));
    const source = open(root);
    expect(await source.get(3)).toEqual({ id: 3, text: 'created' });
    expect(await source.get(2)).toBeUndefined();
    expect(existsSync(path.join(folder, '2.json'))).toBe(false);
    await source.close();
  });

  it('rewrites a file whose write was done but whose bytes the crash damaged (same stamp, other bytes)', async () => {
    const { root, folder } = await folderWith({ '4.json': { id: 4, text: 'xxxxxxxxxxxxxxxxx' } });
    const file = path.join(folder, '4.json');
    // The note names the file as it is now: the write was done, then the crash lost its bytes.
    writeFileSync(path.join(folder, '.streams-journal.1.1.test'), Buffer.concat([write('4.json', JSON.stringify({ id: 4, text: 'what was written' })), doneNote('4.json', file)]));
    const source = open(root);
    expect(await source.get(4)).toEqual({ id: 4, text: 'what was written' });
    await source.close();
  });

  it('keeps a file edited on disk after the journaled write was done, and one made again after a removal', async () => {
    const { root, folder } = await folderWith({ '5.json': { id: 5, text: 'the server wrote this' } });
    const file = path.join(folder, '5.json');
    const journal = Buffer.concat([write('5.json', JSON.stringify({ id: 5, text: 'the server wrote this' })), doneNote('5.json', file), removal('6.json'), doneNote('6.json')]);
    writeFileSync(path.join(folder, '.streams-journal.1.1.test'), journal);
    // The operator's edits while the server was down: a new file (new stamp), and 6 made again.
    writeFileSync(`${file}.new`, JSON.stringify({ id: 5, text: 'edited by hand' }));
    const { renameSync } = await import('node:fs');
    renameSync(`${file}.new`, file);
    writeFileSync(path.join(folder, '6.json'), JSON.stringify({ id: 6, text: 'made again by hand' }));
    const source = open(root);
    expect(await source.get(5)).toEqual({ id: 5, text: 'edited by hand' });
    expect(await source.get(6)).toEqual({ id: 6, text: 'made again by hand' });
    expect(hidden(folder)).toEqual([]);
    await source.close();
  });

  it('replays up to a torn record, never a cancelled write, and later journals win', async () => {
    const { root, folder } = await folderWith({ '7.json': { id: 7, text: 'old' }, '8.json': { id: 8, text: 'old' } });
    const torn = write('8.json', JSON.stringify({ id: 8, text: 'never acknowledged' }));
    writeFileSync(
      path.join(folder, '.streams-journal.1.1.test'),
      Buffer.concat([write('7.json', JSON.stringify({ id: 7, text: 'first' })), write('9.json', JSON.stringify({ id: 9, text: 'failed' })), Buffer.from(`C ${JSON.stringify('9.json')}\n`)]),
    );
    writeFileSync(path.join(folder, '.streams-journal.2.2.test'), Buffer.concat([write('7.json', JSON.stringify({ id: 7, text: 'second' })), torn.subarray(0, torn.byteLength - 5)]));
    const source = open(root);
    expect(await source.get(7)).toEqual({ id: 7, text: 'second' });
    expect(await source.get(8)).toEqual({ id: 8, text: 'old' });
    expect(await source.get(9)).toBeUndefined();
    expect(hidden(folder)).toEqual([]);
    await source.close();
  });

  it('a cancelled write falls back to the earlier acknowledged write of the same name, which is still put back', async () => {
    const { root, folder } = await folderWith({ '7.json': { id: 7, text: 'old' } });
    // Batch 1 wrote 7 (acknowledged; its rename lost in the crash); batch 2's write of 7 failed.
    writeFileSync(
      path.join(folder, '.streams-journal.1.1.test'),
      Buffer.concat([write('7.json', JSON.stringify({ id: 7, text: 'acknowledged' })), write('7.json', JSON.stringify({ id: 7, text: 'failed' })), Buffer.from(`C ${JSON.stringify('7.json')}\n`)]),
    );
    const source = open(root);
    expect(await source.get(7)).toEqual({ id: 7, text: 'acknowledged' });
    expect(hidden(folder)).toEqual([]);
    await source.close();
  });

  it('a damaged record (its checksum differs) ends the replay', () => {
    const good = write('1.json', '{"id":1}');
    const bad = Buffer.from(write('2.json', '{"id":2}'));
    bad[bad.byteLength - 3] = 0x33; // one byte of the entry changed
    const into = new Map<string, ReplayedWrite>();
    expect(parseJournal(Buffer.concat([good, bad, write('3.json', '{"id":3}')]), into)).toEqual({ complete: false });
    expect([...into.keys()]).toEqual(['1.json']);
  });
});

describe('filebase write journal: while the store runs', () => {
  it('every acknowledged write is in its file and in the journal; a clean close checkpoints the journal away', async () => {
    const { root, folder } = await folderWith({});
    const source = open(root);
    await Promise.all(Array.from({ length: 20 }, (_, i) => source.put(i + 1, { id: i + 1, text: `entry ${i + 1}` })));
    await source.delete(3);
    const journal = hidden(folder).find((name) => name.startsWith('.streams-journal.'));
    expect(journal).toBeDefined();
    const replayed = new Map<string, ReplayedWrite>();
    expect(parseJournal(readFileSync(path.join(folder, journal!)), replayed)).toEqual({ complete: true });
    expect(replayed.get('3.json')!.bytes).toBeNull();
    expect(JSON.parse(replayed.get('20.json')!.bytes!.toString())).toEqual({ id: 20, text: 'entry 20' });
    for (let i = 1; i <= 20; i++) expect(existsSync(path.join(folder, `${i}.json`))).toBe(i !== 3);
    await source.close();
    expect(hidden(folder)).toEqual([]);
    const again = open(root);
    expect(await again.count([])).toBe(19);
    expect((await again.get(20)) as Entry).toEqual({ id: 20, text: 'entry 20' });
    await again.close();
  });

  it('a rewrite goes into the inode the previous rewrite replaced; no spare file outlives a clean close or a crash', async () => {
    const { root, folder } = await folderWith({ '1.json': { id: 1, text: 'one' }, '2.json': { id: 2, text: 'two' } });
    const first = statSync(path.join(folder, '1.json')).ino;
    const source = open(root);
    await source.put(1, { id: 1, text: 'one, again' });
    await source.put(2, { id: 2, text: 'two, again' });
    // 1.json's first inode was kept (kernel/tools/spare-files.ts) and now holds 2.json's new bytes.
    expect(statSync(path.join(folder, '2.json')).ino).toBe(first);
    expect(JSON.parse(readFileSync(path.join(folder, '2.json'), 'utf8'))).toEqual({ id: 2, text: 'two, again' });
    expect(JSON.parse(readFileSync(path.join(folder, '1.json'), 'utf8'))).toEqual({ id: 1, text: 'one, again' });
    expect(readdirSync(path.join(folder, SPARE_FOLDER))).toHaveLength(1);
    await source.close();
    expect(hidden(folder)).toEqual([]);
    // What a crash leaves there (an old version of an entry) goes at the next load.
    mkdirSync(path.join(folder, SPARE_FOLDER));
    writeFileSync(path.join(folder, SPARE_FOLDER, 's7'), JSON.stringify({ id: 1, text: 'one' }));
    const again = open(root);
    expect(await again.get(2)).toEqual({ id: 2, text: 'two, again' });
    expect(hidden(folder)).toEqual([]);
    await again.close();
  });

  it('a full journal is checkpointed (its files flushed) and removed while new writes go to the next one', async () => {
    const root = await tempRoot('journal-');
    roots.push(root);
    const journal = new WriteJournal(root, silentLogger, { checkpointBytes: 32 });
    const first = await journal.append([{ name: 'a.json', bytes: Buffer.from('{"a":1}') }, { name: 'b.json', bytes: Buffer.from('{"b":1}') }]);
    writeFileSync(path.join(root, 'a.json'), '{"a":1}');
    const files = hidden(root);
    expect(files).toHaveLength(1);
    const second = await journal.append([{ name: 'c.json', bytes: Buffer.from('{"c":1}') }]);
    expect(hidden(root)).toHaveLength(2);
    // The full one waits for its batch to be in place before it goes.
    first.release();
    second.release();
    await journal.close();
    expect(hidden(root)).toEqual([]);
  });

  it('a journal that cannot be opened fails that batch only: the next one opens it again', async () => {
    const root = await tempRoot('journal-');
    roots.push(root);
    const folder = path.join(root, 'not-yet');
    const journal = new WriteJournal(folder, silentLogger);
    await expect(journal.append([{ name: 'a.json', bytes: Buffer.from('{}') }])).rejects.toMatchObject({ code: 'ENOENT' });
    mkdirSync(folder);
    (await journal.append([{ name: 'a.json', bytes: Buffer.from('{}') }])).release();
    expect(hidden(folder)).toHaveLength(1);
    await journal.close();
    expect(hidden(folder)).toEqual([]);
  });
});
