// Self-tests of the harness (node:test, no extra dependency): `node --test benchmarks/test/`.
// They check the pieces whose mistakes would silently skew a benchmark: parsing wrk, the
// options, medians and ratios, the goal verdicts, and that the ceiling serves the exact
// bytes it was given and really writes durable files.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { entry, generateFilebaseApp, markWritten } from '../lib/dataset.js';
import { parseOptions } from '../lib/options.js';
import { busyShare, cpuTimes, startBaseline, startCeiling } from '../lib/processes.js';
import { goals } from '../lib/report.js';
import { expand, scenarios } from '../lib/scenarios.js';
import { median, ratio } from '../lib/stats.js';
import { parseWrkOutput } from '../lib/wrk.js';
import { describeFilesystem, mountOf } from '../lib/filesystem.js';
import { scalingSvg } from '../lib/chart.js';
import { sideBySide } from '../lib/side-by-side.js';

const WRK_TEXT = `Running 2s test @ http://127.0.0.1:1234
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.20ms  300.00us   5.00ms   80.00%
  Latency Distribution
     50%  850.00us
     75%    1.30ms
     90%    1.50ms
     99%    2.50ms
  80000 requests in 2.00s, 10.00MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 5
Requests/sec:  40000.00
`;

describe('wrk output', () => {
  it('reads the exact Lua summary when present', () => {
    const r = parseWrkOutput(`noise\nWRKJSON {"requests":1000,"duration_us":2000000,"bytes":250000,"connect":0,"read":1,"write":0,"status":3,"timeout":0,"mean_us":900.5,"p50_us":800,"p75_us":900,"p90_us":1000,"p99_us":2500,"max_us":4000}\n`);
    assert.equal(r.rps, 500);
    assert.equal(r.p50Ms, 0.8);
    assert.equal(r.p99Ms, 2.5);
    assert.equal(r.errors, 4);
    assert.equal(r.bytesPerResponse, 250);
  });
  it('falls back to the --latency text with its units', () => {
    const r = parseWrkOutput(WRK_TEXT);
    assert.equal(r.rps, 40000);
    assert.equal(r.p50Ms, 0.85);
    assert.equal(r.p99Ms, 2.5);
    assert.equal(r.errors, 8);
  });
});

describe('options', () => {
  it('quick mode is 10k entries and short runs', () => {
    const o = parseOptions(['--quick']);
    assert.deepEqual(o.sizes, [10_000]);
    assert.ok(o.warmup + o.runs * o.duration <= 8);
    // json-server runs once per scenario in quick mode; never more often than the others.
    assert.equal(o.peerRuns, 1);
    assert.equal(parseOptions(['--full']).peerRuns, parseOptions(['--full']).runs);
    assert.equal(parseOptions(['--full', '--runs', '2']).peerRuns, 2);
  });
  it('refuses two modes and unknown scenarios', () => {
    assert.throws(() => parseOptions(['--quick', '--full']), /choose one/);
    assert.throws(() => parseOptions(['--only', 'get-one,nope']), /unknown scenario/);
    assert.throws(() => parseOptions(['--sizes', '10,-1']), /positive integers/);
  });
  it('--only realtime runs the realtime bench alone; other --only lists leave it out', () => {
    const alone = parseOptions(['--quick', '--only', 'realtime', '--subscribers', '1,500', '--large-subscribers', '100']);
    assert.equal(alone.realtime, true);
    assert.deepEqual([alone.scenarios, alone.sizes, alone.scaling, alone.atScale], [[], [], [], []]);
    assert.deepEqual([alone.subscribers, alone.largeSubscribers], [[1, 500], 100]);
    assert.equal(parseOptions(['--only', 'get-one']).realtime, false);
    assert.equal(parseOptions(['--quick']).realtime, true);
  });
});

describe('scenarios and statistics', () => {
  it('expands templates into the concrete requests wrk will send', () => {
    const getOne = scenarios(10_000).find((s) => s.id === 'get-one');
    const all = expand(getOne.product);
    assert.equal(all.length, 1000);
    assert.equal(all[1].path, '/api/streams/items/entries/11');
    assert.equal(all.at(-1).path, '/api/streams/items/entries/9991');
  });
  it('medians ignore missing values; ratios stay null without both sides', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, NaN, 2, 3]), 2.5);
    assert.equal(median([]), null);
    assert.equal(ratio(10, 0), null);
    assert.equal(ratio(10, 4), 2.5);
  });
  it('never calls a goal met from an invalid scenario', () => {
    const scenario = (id, valid, ceiling, peer) => ({ id, valid, ratios: { ceiling, peer }, targets: { product: { p99Ms: 1 } } });
    const results = {
      meta: { connections: 50 },
      scaling: [],
      datasets: [{ source: 'filebase', count: 10_000, scenarios: [scenario('get-one', false, 0.9, 20), scenario('filtered', true, 0.5, 40), scenario('create', true, 0.4, null)] }],
    };
    const byGoal = Object.fromEntries(goals(results).map((g) => [g.goal, g]));
    assert.equal(byGoal['GET one vs bare uWS (same bytes)'].met, null);
    assert.equal(byGoal['filtered list vs json-server'].met, true);
    assert.equal(byGoal['durable create vs bare fsync ceiling'].met, false);
  });
  it('states the realtime goals: p99 at 10,000 subscribers, RSS per idle subscriber, a 1 MB write with subscribers', () => {
    const level = (subscribers, p99Ms, rssPerSubscriberBytes, missing = 0) => ({ subscribers, changes: 30, p50Ms: 1, p99Ms, maxMs: p99Ms, missing, rssPerSubscriberBytes });
    const large = { writes: 10, subscribers: 1000, without: { p50Ms: 20, p99Ms: 30, maxMs: 30 }, with: { p50Ms: 40, p99Ms: 60, maxMs: 60 }, delivery: {}, missing: 0 };
    const results = { meta: { connections: 50 }, scaling: [], datasets: [], realtime: { levels: [level(1, 2, null), level(10_000, 80, 6000)], large } };
    const byGoal = Object.fromEntries(goals(results).map((g) => [g.goal, g]));
    assert.equal(byGoal['p99 change-to-subscriber, 10,000 subscribers'].met, true);
    assert.equal(byGoal['RSS per idle WebSocket subscriber'].value, 6000 / 1024);
    assert.equal(byGoal['RSS per idle WebSocket subscriber'].met, true);
    assert.equal(byGoal['1 MB write answered, 1,000 subscribers (p99)'].met, false);
    results.realtime.levels[1].missing = 3;
    assert.equal(goals(results).find((g) => g.goal.startsWith('p99 change')).met, null);
  });
  it('states the issue #33 goals: boot against the minimal loader (lower is better), the stricter and node:http ceilings, durable PATCH', () => {
    const scenario = (id, ratios, valid = true) => ({ id, valid, targets: {}, ratios: { ceiling: 1, peer: null, node: null, bare: null, nodeCeiling: null, ...ratios } });
    const dataset = { source: 'filebase', count: 10_000, transport: 'uWebSockets.js', scenarios: [scenario('get-one', { bare: 0.86, nodeCeiling: 0.8 }), scenario('patch', { ceiling: 1.2 }), scenario('create', { ceiling: 0.9 })] };
    const boot = (ms, honest = true) => ({ servableMs: ms, readyMs: ms - 5, honest, entryStatus: 200 });
    const results = { meta: { connections: 50 }, scaling: [], datasets: [dataset], baseline: [{ count: 100_000, boot: boot(1000), minimalBoot: boot(1000), bootRatio: 1, sortOrders: [] }] };
    const byGoal = Object.fromEntries(goals(results).map((g) => [g.goal, g]));
    assert.equal(byGoal['GET one vs bare uWS sending only the body'].met, true);
    assert.equal(byGoal['GET one on node:http vs bare node:http (same bytes)'].met, false);
    assert.equal(byGoal['durable PATCH vs bare fsync ceiling'].met, true);
    assert.equal(byGoal['durable create vs bare fsync ceiling'].met, false);
    // 1.0x of the minimal loader meets "at most 1.0x"; slower does not; ready before servable never counts.
    assert.equal(byGoal['boot to first servable entry vs the minimal loader, 100k'].met, true);
    results.baseline[0].bootRatio = 1.2;
    assert.equal(goals(results).find((g) => g.goal.startsWith('boot to first servable entry vs')).met, false);
    results.baseline[0].bootRatio = 0.5;
    results.baseline[0].boot.honest = false;
    assert.equal(goals(results).find((g) => g.goal.startsWith('boot to first servable entry vs')).met, null);
  });
  it('runs a pair side by side: both at once, the first started alternating, the median of the rounds\' ratios', async () => {
    const a = { name: 'product' };
    const b = { name: 'bare' };
    const rates = { product: [90, 80, 99, 70, 88], bare: [100, 100, 100, 100, 100] };
    const started = [];
    let running = 0;
    let most = 0;
    const run = async (t) => {
      const first = started.push(t.name) === 1;
      most = Math.max(most, ++running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      return { rps: rates[t.name].shift(), errors: first ? 2 : 0 };
    };
    const lines = [];
    const out = await sideBySide({ a, b, rounds: 5, run, log: (line) => lines.push(line) });
    assert.equal(most, 2);
    assert.deepEqual(started, ['product', 'bare', 'bare', 'product', 'product', 'bare', 'bare', 'product', 'product', 'bare']);
    assert.deepEqual(out.rounds.map((r) => r.ratio), [0.9, 0.8, 0.99, 0.7, 0.88]);
    assert.equal(out.ratio, 0.88);
    assert.equal(out.low, 0.7);
    assert.equal(out.high, 0.99);
    assert.equal(out.errors, 2);
    assert.equal(lines.length, 5);
    assert.equal(out.serverBusy, null);
  });
  it('says how busy the server core was in each side-by-side round, and the median of them', async () => {
    // Jiffies as /proc/stat counts them: each round 100 pass, `idle` of them idle.
    const idle = [5, 30, 0];
    let total = 0;
    let idleSoFar = 0;
    let reading = 0;
    const core = {
      sample() {
        // Two readings per round: before it starts and once both runs ended.
        if (reading++ % 2 === 1) {
          total += 100;
          idleSoFar += idle.shift();
        }
        return { total, idle: idleSoFar };
      },
      share: busyShare,
    };
    const lines = [];
    const out = await sideBySide({ a: { name: 'product' }, b: { name: 'bare' }, rounds: 3, run: async () => ({ rps: 10 }), log: (line) => lines.push(line), core });
    assert.deepEqual(out.rounds.map((r) => r.serverBusy), [0.95, 0.7, 1]);
    assert.equal(out.serverBusy, 0.95);
    assert.match(lines[1], /server core busy 70%$/);
    assert.equal(busyShare(null, { total: 1, idle: 0 }), null);
    assert.equal(busyShare({ total: 5, idle: 0 }, { total: 5, idle: 0 }), null);
    // This machine's own CPU 0, read twice: a share between 0 and 1, or null without /proc/stat.
    const first = cpuTimes('0');
    if (first !== null) {
      assert.ok(first.total >= first.idle && first.idle >= 0);
      assert.equal(cpuTimes('9999'), null);
    }
  });
  it('states the side-by-side goals with their spread, never as met when the product answered errors', () => {
    const pair = (ratio) => ({ ratio, low: ratio - 0.02, high: ratio + 0.03, rounds: [{}, {}, {}] });
    const getOne = { id: 'get-one', valid: true, targets: {}, ratios: { ceiling: 1, bare: 0.8 }, sideBySide: { bare: pair(0.9), nodeCeiling: pair(0.84) } };
    const results = { meta: { connections: 50 }, scaling: [], datasets: [{ source: 'filebase', count: 10_000, transport: 'uWebSockets.js', scenarios: [getOne] }] };
    const byGoal = Object.fromEntries(goals(results).map((g) => [g.goal, g]));
    assert.equal(byGoal['GET one vs bare uWS sending only the body'].met, false);
    assert.equal(byGoal['GET one vs bare uWS sending only the body, side by side'].met, true);
    assert.match(byGoal['GET one vs bare uWS sending only the body, side by side'].where, /median of 3 rounds \(0\.88-0\.93\)$/);
    getOne.sideBySide.bare.serverBusy = 0.904;
    assert.match(goals(results).find((g) => g.goal.endsWith('the body, side by side')).where, /\(0\.88-0\.93\), server core busy 90%$/);
    assert.equal(byGoal['GET one on node:http vs bare node:http (same bytes), side by side'].met, false);
    getOne.valid = false;
    assert.equal(goals(results).find((g) => g.goal.endsWith('the body, side by side')).met, null);
    // Without a native binary the product itself runs on node:http, side by side with its ceiling.
    results.datasets[0].transport = 'node:http';
    getOne.valid = true;
    getOne.sideBySide = { ceiling: pair(0.86) };
    assert.equal(goals(results).find((g) => g.goal === 'GET one vs bare node:http (same bytes), side by side').met, true);
  });
  it('draws a chart even with missing latency points', () => {
    const svg = scalingSvg([{ count: 1000, bootMs: 300, rssKb: 80_000, filter: { p50Ms: 0.3, p99Ms: 1 } }, { count: 100_000, bootMs: 3000, rssKb: 300_000, filter: null }], 'x');
    assert.match(svg, /^<svg/);
    assert.doesNotMatch(svg, /NaN/);
  });
});

for (const transport of ['uws', 'node']) describe(`ceiling server (${transport})`, () => {
  let dir;
  let ceiling;
  let bare;
  const body = Buffer.from(JSON.stringify({ errors: [], data: entry(7) }));
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'bench-ceiling-'));
    const captures = path.join(dir, 'captures.json');
    await writeFile(
      captures,
      JSON.stringify({
        replay: [{ method: 'GET', url: '/api/x?where[a]=b&page=2', status: 200, headers: { 'content-type': 'application/json', etag: '"abc"' }, body: body.toString('base64') }],
        writes: { POST: { method: 'POST', url: '/api/x', status: 201, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"created":true}').toString('base64') } },
      }),
    );
    ceiling = await startCeiling({ captures, writeDir: path.join(dir, 'writes'), pin: false, transport });
    bare = await startCeiling({ captures, writeDir: path.join(dir, 'bare-writes'), pin: false, transport, bodyOnly: true });
  });
  after(async () => {
    await ceiling?.stop();
    await bare?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  it('replays the captured bytes and headers for the exact URL', async () => {
    const response = await fetch(`${ceiling.url}/api/x?where[a]=b&page=2`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('etag'), '"abc"');
    assert.deepEqual(Buffer.from(await response.arrayBuffer()), body);
    const miss = await fetch(`${ceiling.url}/api/x?page=3`);
    await miss.arrayBuffer();
    assert.equal(miss.status, 404);
  });
  it('with --body-only sends the same body with content-type and no other captured header', async () => {
    const response = await fetch(`${bare.url}/api/x?where[a]=b&page=2`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.equal(response.headers.get('etag'), null);
    assert.deepEqual(Buffer.from(await response.arrayBuffer()), body);
  });
  it('writes each POST body to its own file before answering, with no temp file left', async () => {
    const payload = JSON.stringify(entry(3));
    const answers = await Promise.all([1, 2, 3].map(() => fetch(`${ceiling.url}/api/x`, { method: 'POST', body: payload, headers: { 'content-type': 'application/json' } })));
    for (const a of answers) {
      assert.equal(a.status, 201);
      assert.equal(await a.text(), '{"created":true}');
    }
    const files = (await readdir(path.join(dir, 'writes'))).sort();
    assert.deepEqual(files, ['c1.json', 'c2.json', 'c3.json']);
    assert.equal(await readFile(path.join(dir, 'writes', 'c2.json'), 'utf8'), payload);
  });
});

describe('minimal loader', () => {
  it('serves every entry of the folder once listening, and only then', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-minimal-'));
    const data = path.join(dir, 'items');
    await mkdir(data);
    for (const id of [1, 2, 3]) await writeFile(path.join(data, `${id}.json`), JSON.stringify(entry(id)));
    const loader = await startBaseline({ dataDir: data, pin: false, minimal: true });
    try {
      let ready;
      for (let i = 0; i < 200 && ready?.status !== 200; i++) {
        ready = await fetch(`${loader.url}/readyz`).catch(() => undefined);
        await ready?.arrayBuffer();
        if (ready?.status !== 200) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.equal(ready?.status, 200);
      const one = await fetch(`${loader.url}/items/3`);
      assert.equal(one.status, 200);
      assert.deepEqual((await one.json()).data, entry(3));
      const miss = await fetch(`${loader.url}/items/4`);
      await miss.arrayBuffer();
      assert.equal(miss.status, 404);
    } finally {
      await loader.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('datasets', () => {
  it('a kept dataset the write scenarios ran on is generated again, not reused', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-dataset-'));
    try {
      const first = await generateFilebaseApp(dir, 3);
      assert.equal(first.reused, false);
      assert.equal((await generateFilebaseApp(dir, 3)).reused, true);
      // What a POST create run leaves behind in a --keep --work-dir folder.
      const data = path.join(dir, 'streams', 'data', 'items');
      await writeFile(path.join(data, '4.json'), JSON.stringify(entry(4)));
      const again = await generateFilebaseApp(dir, 3);
      assert.equal(again.reused, false);
      assert.deepEqual((await readdir(data)).sort(), ['1.json', '2.json', '3.json']);
      // A PATCH run changes entries in place: the run marks the dataset, which is then made again.
      await writeFile(path.join(data, '2.json'), JSON.stringify({ ...entry(2), price: 0.25 }));
      await markWritten(dir);
      assert.equal((await generateFilebaseApp(dir, 3)).reused, false);
      assert.deepEqual(JSON.parse(await readFile(path.join(data, '2.json'), 'utf8')), entry(2));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('file system of the data', () => {
  it('names the mount holding the folder, its journal, notable options and the cached dentries', async () => {
    const proc = await mkdtemp(path.join(os.tmpdir(), 'bench-proc-'));
    try {
      await mkdir(path.join(proc, 'fs', 'jbd2'), { recursive: true });
      await mkdir(path.join(proc, 'sys', 'fs'), { recursive: true });
      await writeFile(
        path.join(proc, 'mounts'),
        ['/dev/vda / ext4 rw,relatime,discard 0 0', 'tmpfs /run tmpfs rw,nosuid 0 0', '/dev/vdb /data\\040disk xfs rw,noatime 0 0', ''].join('\n'),
      );
      await writeFile(path.join(proc, 'sys', 'fs', 'dentry-state'), '2455494\t2450383\t45\t0\t139907\t0\n');
      // The nearest existing folder stands for one not made yet; the longest mount point wins.
      assert.equal(describeFilesystem('/no/such/folder/yet', proc), 'ext4 (no journal; relatime, discard); cached dentries 2,455,494');
      assert.equal(mountOf('/data disk/bench', await readFile(path.join(proc, 'mounts'), 'utf8')).type, 'xfs');
      assert.equal(mountOf('/run/x', await readFile(path.join(proc, 'mounts'), 'utf8')).type, 'tmpfs');
      await mkdir(path.join(proc, 'fs', 'jbd2', 'vdb-8'));
      // Journals elsewhere, none named for this device: nothing claimed either way.
      assert.match(describeFilesystem('/', proc), /^ext4 \(relatime, discard\)/);
      await mkdir(path.join(proc, 'fs', 'jbd2', 'vda-8'));
      assert.match(describeFilesystem('/', proc), /^ext4 \(journal; relatime, discard\)/);
      await rm(path.join(proc, 'mounts'));
      assert.equal(describeFilesystem('/', proc), 'unknown');
    } finally {
      await rm(proc, { recursive: true, force: true });
    }
  });
});
