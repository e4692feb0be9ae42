#!/usr/bin/env node
// Load time and memory per entry of the filebase source (issue 4), plus the cost of the
// in-memory reads that follow. Uses the compiled plugins in dist/ (npx tsc -p tsconfig.build.json).
// Usage: node --expose-gc benchmarks/load-sources.js [count ...]   (default: 10000 100000)
import 'reflect-metadata';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { applyConfigSections, buildConfig } from '../dist/kernel/index.js';
import { streamsSettings } from '../dist/plugins/streams/index.js';
import { createSourceRegistry } from '../dist/plugins/sources/index.js';

const counts = process.argv.slice(2).map(Number).filter((n) => n > 0);
const logger = { child: () => logger, warn() {}, error() {}, info() {}, debug() {} };
const gc = globalThis.gc ?? (() => undefined);
if (!globalThis.gc) console.warn('run with --expose-gc for a meaningful memory figure');

function entry(i) {
  return {
    id: i,
    title: `Entry number ${i}`,
    year: 1950 + (i % 70),
    rating: (i % 100) / 10,
    seen: i % 3 === 0,
    tags: ['a', `t${i % 7}`],
    director: `Director ${i % 500}`,
    summary: 'A short text of the kind an entry carries, some eighty characters long or so.',
  };
}

const definition = {
  id: 'bench',
  name: 'bench',
  config: { key_name: 'id', source: { type: 'filebase', format: 'json' } },
  fields: [{ handle: 'id', type: 'integer', required: false, unique: false, protected: false, rules: [], config: {} }],
  rules: {},
  routes: [],
  extra: {},
  raw: { id: 'bench' },
};

function time(fn) {
  const start = performance.now();
  const result = fn();
  return result instanceof Promise ? result.then((r) => [performance.now() - start, r]) : [performance.now() - start, result];
}

async function run(count) {
  const root = await mkdtemp(path.join(os.tmpdir(), 'bench-sources-'));
  try {
    const folder = path.join(root, 'streams/data/bench');
    await mkdir(folder, { recursive: true });
    for (let i = 1; i <= count; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, count - i + 1) }, (_, j) => writeFile(path.join(folder, `${i + j}.json`), JSON.stringify(entry(i + j), null, 2))),
      );
    }
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const config = buildConfig({}, root);
    applyConfigSections(config, [{ plugin: 'streams', section: streamsSettings }]);
    const source = createSourceRegistry(config, root, logger).for(definition);
    const [loadMs] = await time(() => source.open());
    gc();
    const heapAfter = process.memoryUsage().heapUsed;
    const keys = Array.from({ length: 10000 }, (_, i) => 1 + ((i * 7919) % count));
    const [getMs] = await time(async () => {
      for (const k of keys) await source.get(k);
    });
    const where = [
      { boolean: 'and', field: 'year', operator: '>=', value: 2000 },
      { boolean: 'and', field: 'title', operator: 'LIKE', value: '%9' },
    ];
    // Median of 5 runs: the first pays for JIT warm-up.
    const median = async (fn) => {
      const runs = [];
      let last;
      for (let r = 0; r < 5; r++) {
        const [ms, value] = await time(fn);
        runs.push(ms);
        last = value;
      }
      return [runs.sort((a, b) => a - b)[2], last];
    };
    const [filterMs, page] = await median(() => source.paginate({ where, orderBy: [], skip: 0, limit: 100 }));
    const [countMs] = await median(() => source.count([where[0]]));
    const orderBy = [{ field: 'rating', direction: 'desc' }, { field: 'title', direction: 'asc' }];
    const [sortFirstMs] = await time(() => source.paginate({ where: [], orderBy, skip: 0, limit: 100 }));
    const [sortCachedMs] = await time(() => source.paginate({ where: [], orderBy, skip: 100, limit: 100 }));
    const [putMs] = await time(() => source.put(count + 1, entry(count + 1)));
    await source.close();
    return {
      entries: count,
      load_ms: Math.round(loadMs),
      bytes_per_entry: Math.round((heapAfter - heapBefore) / count),
      get_us: +((getMs * 1000) / keys.length).toFixed(2),
      filtered_page_ms: +filterMs.toFixed(2),
      filtered_total: page.total,
      count_ms: +countMs.toFixed(2),
      sorted_first_ms: +sortFirstMs.toFixed(2),
      sorted_cached_ms: +sortCachedMs.toFixed(2),
      durable_put_ms: +putMs.toFixed(2),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

const results = [];
for (const count of counts.length > 0 ? counts : [10000, 100000]) results.push(await run(count));
console.table(results);
console.log(JSON.stringify(results));
