// Command-line options of `npm run bench`. Kept dependency-free (node:util parseArgs) so the
// harness runs with plain `node` right after `npm install`.
import { parseArgs } from 'node:util';

export const USAGE = `Usage: npm run bench [-- options]

  --quick            about 4 minutes on 2 cores: 10k entries, 1 s warm-up, 3 runs x 2 s,
                     scaling 1k/10k/100k (100k: boot time and memory only)
  --full             (default) 10k and 100k entries, 3 s warm-up, 5 runs x 10 s,
                     scaling 1k/10k/100k/1M with filter latency everywhere (30+ minutes)
  --smoke            a harness self-check in under a minute: 1k entries, 1 run x 1 s;
                     results go to a temporary folder, never to benchmarks/results
  --only a,b         run only these scenarios: get-one,list,filtered,query,patch,create,realtime,access
                     (without any of the first six: no datasets, scaling or at-scale runs
                     unless --scaling or --at-scale is given; --only realtime runs it alone)
  --subscribers 1,100,...  WebSocket subscriber counts of the realtime latency levels
                     (quick and full: 1,100,1000,10000)
  --large-subscribers N    subscribers during the 1 MB changes (quick and full: 1000)
  --sizes 10000,...  entry counts of the scenario datasets (overrides the mode)
  --scaling 1000,... entry counts of the scaling table (overrides the mode; "none" skips it)
  --runs N --duration S --warmup S   override the mode's run count and lengths
  --connections N    concurrent connections of every scenario (default 50)
  --work-dir DIR     where datasets are generated (default: a new folder under the OS temp dir)
  --keep             keep the generated datasets (default: removed at the end)
  --no-pin           do not pin with taskset (server on CPU 0, wrk on CPU 1)
  --product-root DIR benchmark the product of another checkout (its kernel/boot.js and dist/);
                     default: this repository
  --at-scale 100000,...  entry counts of the side-by-side runs against the hand-written
                     fastify baseline (uncached filtered page, new sort order, boot to a
                     servable entry); quick: 100k, full: 100k and 1M; "none" skips them
  --help             this text

MongoDB scenarios run too when MONGODB_URL is set (database streams_bench_<pid>, dropped at the end).`;

export const SCENARIO_IDS = ['get-one', 'list', 'filtered', 'query', 'patch', 'create'];
/** Selectable with --only beside the scenarios: the realtime bench (lib/realtime.js). */
export const REALTIME_ID = 'realtime';
/** Selectable with --only: GET one with and without a JWT (lib/access.js, issue #28). */
export const ACCESS_ID = 'access';

const MODES = {
  // peerRuns: json-server's runs per scenario (fewer in quick mode: its ratios are 15-600x their goals, and its runs are a tenth of the quick run's time).
  quick: { warmup: 1, runs: 3, peerRuns: 1, duration: 2, sizes: [10_000], scaling: [1_000, 10_000, 100_000], scalingFilterMax: 10_000, boots: 1, bootPairs: 3, atScale: [100_000] },
  full: { warmup: 3, runs: 5, duration: 10, sizes: [10_000, 100_000], scaling: [1_000, 10_000, 100_000, 1_000_000], scalingFilterMax: Infinity, boots: 3, bootPairs: 3, atScale: [100_000, 1_000_000] },
  smoke: { warmup: 0.5, runs: 1, peerRuns: 1, duration: 1, sizes: [1_000], scaling: [1_000], scalingFilterMax: Infinity, boots: 1, bootPairs: 1, atScale: [1_000] },
};

function numberList(text, name) {
  if (text === 'none') return [];
  const list = text.split(',').map((part) => Number(part.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--${name} takes positive integers separated by commas, got "${text}"`);
  return list;
}

function positive(text, name) {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} takes a positive number, got "${text}"`);
  return n;
}

/** Parse argv into one plain options object; throws with a readable message on bad input. */
export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      quick: { type: 'boolean' },
      full: { type: 'boolean' },
      smoke: { type: 'boolean' },
      only: { type: 'string' },
      sizes: { type: 'string' },
      scaling: { type: 'string' },
      'at-scale': { type: 'string' },
      runs: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'work-dir': { type: 'string' },
      keep: { type: 'boolean' },
      'no-pin': { type: 'boolean' },
      'product-root': { type: 'string' },
      subscribers: { type: 'string' },
      'large-subscribers': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true };
  const chosen = ['quick', 'full', 'smoke'].filter((m) => values[m]);
  if (chosen.length > 1) throw new Error(`choose one of --quick, --full, --smoke (got ${chosen.join(' and ')})`);
  const mode = chosen[0] ?? 'full';
  const base = MODES[mode];
  const known = [...SCENARIO_IDS, REALTIME_ID, ACCESS_ID];
  const only = values.only ? values.only.split(',').map((s) => s.trim()) : known;
  const unknown = only.filter((id) => !known.includes(id));
  if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${known.join(', ')}`);
  const scenarios = SCENARIO_IDS.filter((id) => only.includes(id));
  // `--only realtime` (no wrk scenario): nothing else runs unless asked for by name.
  const wrkParts = scenarios.length > 0;
  return {
    help: false,
    mode,
    scenarios,
    realtime: only.includes(REALTIME_ID),
    access: only.includes(ACCESS_ID),
    subscribers: values.subscribers ? numberList(values.subscribers, 'subscribers') : null,
    largeSubscribers: values['large-subscribers'] ? Math.round(positive(values['large-subscribers'], 'large-subscribers')) : null,
    sizes: values.sizes ? numberList(values.sizes, 'sizes') : wrkParts ? base.sizes : [],
    scaling: values.scaling ? numberList(values.scaling, 'scaling') : wrkParts ? base.scaling : [],
    atScale: values['at-scale'] ? numberList(values['at-scale'], 'at-scale') : wrkParts ? base.atScale : [],
    scalingFilterMax: base.scalingFilterMax,
    boots: base.boots,
    bootPairs: base.bootPairs,
    runs: values.runs ? Math.round(positive(values.runs, 'runs')) : base.runs,
    peerRuns: Math.min(base.peerRuns ?? Infinity, values.runs ? Math.round(positive(values.runs, 'runs')) : base.runs),
    duration: values.duration ? positive(values.duration, 'duration') : base.duration,
    warmup: values.warmup ? positive(values.warmup, 'warmup') : base.warmup,
    connections: values.connections ? Math.round(positive(values.connections, 'connections')) : 50,
    workDir: values['work-dir'] ?? null,
    keep: Boolean(values.keep),
    pin: !values['no-pin'],
    productRoot: values['product-root'] ?? null,
    mongodbUrl: process.env.MONGODB_URL || null,
  };
}
