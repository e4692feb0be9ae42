// Generates a self-contained application folder for the product (definition, N entry
// files, config) and the same data as a db.json for json-server. Deterministic, so two
// runs on two machines serve the same bytes.
import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export const STREAM_ID = 'items';
export const CATEGORIES = ['books', 'music', 'film', 'games', 'garden', 'tools', 'toys', 'food'];
const WORDS = ['red', 'quiet', 'river', 'paper', 'stone', 'north', 'silver', 'garden', 'early', 'glass', 'winter', 'open'];
/** Bump when the generated shape changes, so a reused --work-dir is regenerated. */
const GENERATOR_VERSION = 1;

export function definition(source) {
  return {
    id: STREAM_ID,
    name: 'Items',
    description: 'Generated catalogue items for the benchmarks.',
    config: { source },
    fields: {
      id: { type: 'integer', config: { default: 'increment' } },
      title: { type: 'string', required: true, rules: 'max:200' },
      category: { type: 'select', config: { options: CATEGORIES } },
      year: { type: 'integer' },
      price: { type: 'decimal', config: { precision: 2 } },
      available: { type: 'boolean' },
    },
  };
}

/** Entry i (1-based). Cheap integer mixing keeps it deterministic without a PRNG. */
export function entry(i) {
  const h = Math.imul(i, 2654435761) >>> 0;
  return {
    id: i,
    title: `${WORDS[h % WORDS.length]} ${WORDS[(h >>> 8) % WORDS.length]} item ${i}`,
    category: CATEGORIES[i % CATEGORIES.length],
    year: 1950 + ((h >>> 4) % 75),
    price: ((h >>> 12) % 100000) / 100,
    available: h % 3 !== 0,
  };
}

/** The product's config for an app folder (root = the config's folder). */
export function productConfig(extra = {}) {
  // log level info: the boot contract prints the listening URL at info; requests log at debug only.
  // STREAMS_BENCH_METRICS=1: the same runs with the metrics plugin on (its request path must cost under 3%, issue #32).
  const metrics = process.env.STREAMS_BENCH_METRICS === '1' ? { plugins: ['metrics'] } : {};
  return { log: { level: 'info' }, http: { host: '127.0.0.1' }, api: { max_per_page: 1000 }, ...metrics, ...extra };
}

/**
 * Create (or reuse, when its marker matches and it still holds exactly its entries) `<dir>` holding streams/items.json, N files
 * streams/data/items/<id>.json, config.json and, when asked, db.json for json-server.
 * Returns paths and how long generation took.
 */
export async function generateFilebaseApp(dir, count, { peer = false } = {}) {
  const marker = path.join(dir, '.bench-dataset.json');
  const want = { version: GENERATOR_VERSION, count, peer };
  const data = path.join(dir, 'streams', 'data', STREAM_ID);
  if (existsSync(marker)) {
    const have = JSON.parse(await readFile(marker, 'utf8'));
    // The write scenarios add entries: a kept --work-dir used again must not serve (and boot)
    // more entries than its name says, so a folder grown by them is generated again.
    const files = await readdir(data).then((names) => names.length, () => -1);
    if (have.version === want.version && have.count === count && (have.peer || !peer) && files === count) {
      return { dir, config: path.join(dir, 'config.json'), db: path.join(dir, 'db.json'), count, generatedMs: 0, reused: true };
    }
  }
  const started = performance.now();
  await rm(data, { recursive: true, force: true });
  await mkdir(data, { recursive: true });
  await writeFile(path.join(dir, 'streams', `${STREAM_ID}.json`), JSON.stringify(definition({ type: 'filebase', format: 'json' }), null, 2));
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(productConfig(), null, 2));
  // One synchronous loop: nothing else runs in the harness while a dataset is made, and
  // fs.promises.writeFile's open, write and close through the thread pool took twice as long
  // (100k files: 28.9 s against 13.6 s on this project's VM, most of a quick run's margin).
  for (let i = 1; i <= count; i++) writeFileSync(path.join(data, `${i}.json`), JSON.stringify(entry(i)));
  if (peer) await writeDb(path.join(dir, 'db.json'), count);
  await writeFile(marker, JSON.stringify(want));
  return { dir, config: path.join(dir, 'config.json'), db: path.join(dir, 'db.json'), count, generatedMs: performance.now() - started, reused: false };
}

/**
 * The write scenarios change the entries (PATCH rewrites prices, POST adds files): a dataset they
 * ran on is no longer the generated one, so it is generated again the next time it is asked for.
 */
export async function markWritten(dir) {
  await rm(path.join(dir, '.bench-dataset.json'), { force: true });
}

/** json-server's database: the same entries under the same collection name. */
async function writeDb(file, count) {
  const parts = [];
  for (let i = 1; i <= count; i++) parts.push(JSON.stringify(entry(i)));
  await writeFile(file, `{"${STREAM_ID}":[\n${parts.join(',\n')}\n]}\n`);
}

/**
 * An app folder whose stream lives in MongoDB (source database, connection default, the
 * URL from MONGODB_URL). Its entries are seeded through the product's own API afterwards,
 * so the harness never depends on the mongodb plugin's document layout.
 */
export async function generateMongoApp(dir, database) {
  await mkdir(path.join(dir, 'streams'), { recursive: true });
  await writeFile(path.join(dir, 'streams', `${STREAM_ID}.json`), JSON.stringify(definition({ type: 'database', connection: 'default' }), null, 2));
  const config = productConfig({ plugins: ['mongodb'], mongodb: { connections: { default: { url_env: 'MONGODB_URL', database } } } });
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  return { dir, config: path.join(dir, 'config.json'), db: null, database };
}
