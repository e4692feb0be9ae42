#!/usr/bin/env node
// `npm run bench [-- --quick | --full | --smoke]`: the product against its ceilings and a
// peer, on loopback, load from wrk in a separate process. See benchmarks/README.md.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchDataset } from './lib/bench-dataset.js';
import { describeFilesystem } from './lib/filesystem.js';
import { generateFilebaseApp, generateMongoApp } from './lib/dataset.js';
import { USAGE, parseOptions } from './lib/options.js';
import { REPO, getProductRoot, hasJsonServer, hasTaskset, productMissing, setProductRoot } from './lib/processes.js';
import { goals, goalsTable, summaryTable, transportTable, writeResults } from './lib/report.js';
import { benchRealtime, realtimeTable } from './lib/realtime.js';
import { accessTable, benchAccess } from './lib/access.js';
import { benchScaling } from './lib/scaling.js';
import { baselineTable, benchBaseline } from './lib/baseline.js';
import { WRK_MISSING, wrkVersion } from './lib/wrk.js';

const log = (line) => process.stdout.write(`${line}\n`);

function commandOutput(cmd, args, cwd = REPO) {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function metadata(options, workDir, wrk) {
  const root = getProductRoot();
  const commit = commandOutput('git', ['rev-parse', '--short', 'HEAD'], root) ?? (root === REPO ? 'unknown' : path.basename(root));
  const dirty = commandOutput('git', ['status', '--porcelain', '--', 'kernel', 'plugins'], root);
  return {
    productRoot: root === REPO ? '.' : root,
    date: new Date().toISOString().slice(0, 10),
    startedAt: new Date().toISOString(),
    mode: options.mode,
    commit: dirty ? `${commit}+uncommitted` : commit,
    node: process.version,
    wrk,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model?.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    filesystem: describeFilesystem(workDir),
    pinned: options.pin && hasTaskset(),
    connections: options.connections,
    runs: options.runs,
    peerRuns: options.peerRuns,
    duration: options.duration,
    warmup: options.warmup,
    scenarios: options.scenarios,
    sizes: options.sizes,
    scaling: options.scaling,
    atScale: options.atScale,
    mongodb: Boolean(options.mongodbUrl),
  };
}

async function dropMongoDatabase(url, database) {
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.connect();
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
}

async function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    log(USAGE);
    return 0;
  }
  if (options.productRoot) setProductRoot(options.productRoot);
  const missing = productMissing();
  if (missing) {
    process.stderr.write(`bench: ${missing}\n`);
    return 1;
  }
  // wrk drives every part but the realtime one (`--only realtime` runs without it).
  const needsWrk = options.sizes.length > 0 || options.scaling.length > 0 || options.atScale.length > 0 || options.access;
  const wrk = needsWrk ? wrkVersion() : 'not used';
  if (!wrk) {
    process.stderr.write(`bench: ${WRK_MISSING}\n`);
    return 1;
  }
  options.peer = hasJsonServer();
  if (!options.peer) log('bench: json-server is not installed (npm install installs it as a devDependency): the peer columns stay empty');
  if (options.pin && !hasTaskset()) log('bench: taskset not found (util-linux): servers and wrk are not pinned to separate CPUs');
  if (os.cpus().length < 2 && options.pin) {
    log('bench: fewer than 2 CPUs: pinning disabled');
    options.pin = false;
  }

  const ownWorkDir = !options.workDir;
  const workDir = options.workDir ? path.resolve(options.workDir) : await mkdtemp(path.join(os.tmpdir(), 'streams-bench-'));
  const running = new Set();
  const track = (server) => {
    running.add(server);
    const stop = server.stop;
    server.stop = async () => {
      running.delete(server);
      await stop();
    };
    return server;
  };
  const mongoDatabases = [];
  let interrupted = false;
  const cleanup = async () => {
    for (const server of [...running]) await server.stop().catch(() => undefined);
    for (const db of mongoDatabases) await dropMongoDatabase(options.mongodbUrl, db).catch((e) => log(`bench: could not drop ${db}: ${e.message}`));
    if (ownWorkDir && !options.keep) await rm(workDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    interrupted = true;
    log('bench: interrupted, stopping servers');
    cleanup().finally(() => process.exit(130));
  });

  const started = performance.now();
  const meta = metadata(options, workDir, wrk);
  log(`bench: mode ${options.mode}, scenarios ${options.scenarios.join(', ')}, datasets ${options.sizes.join(', ')}, work dir ${workDir}`);
  const results = { meta, datasets: [], scaling: [], realtime: null, baseline: [], access: null };
  try {
    for (const count of options.scenarios.length > 0 ? options.sizes : []) {
      const app = await generateFilebaseApp(path.join(workDir, `filebase-${count}`), count, { peer: options.peer });
      log(`[filebase-${count}] ${app.reused ? 'reused' : `generated in ${(app.generatedMs / 1000).toFixed(1)} s`}: ${app.dir}`);
      results.datasets.push(await benchDataset({ options, dataset: { label: `filebase-${count}`, source: 'filebase', count, app, generatedMs: app.generatedMs }, track, log }));
    }
    if (options.mongodbUrl) {
      for (const count of options.sizes) {
        const database = `streams_bench_${process.pid}_${count}`;
        mongoDatabases.push(database);
        await dropMongoDatabase(options.mongodbUrl, database);
        const app = await generateMongoApp(path.join(workDir, `mongodb-${count}`), database);
        results.datasets.push(await benchDataset({ options, dataset: { label: `mongodb-${count}`, source: 'mongodb', count, app }, track, log }));
      }
    } else {
      log('bench: MONGODB_URL is not set: MongoDB scenarios skipped');
    }
    if (options.atScale.length) results.baseline = await benchBaseline({ options, workDir, track, log });
    if (options.scaling.length) results.scaling = await benchScaling({ options, workDir, track, log });
    if (options.realtime) results.realtime = await benchRealtime({ options, workDir, track, log });
    if (options.access) results.access = await benchAccess({ options, workDir, track, log });
  } catch (error) {
    if (interrupted) return 130;
    log(`bench: FAILED: ${error.stack ?? error.message}`);
    await cleanup();
    return 1;
  }
  meta.durationS = (performance.now() - started) / 1000;
  await cleanup();

  const smoke = options.mode === 'smoke';
  const dir = smoke ? await mkdtemp(path.join(os.tmpdir(), 'streams-bench-smoke-')) : path.join(REPO, 'benchmarks', 'results');
  const files = await writeResults(results, { dir, readme: smoke ? null : path.join(REPO, 'benchmarks', 'README.md') });
  log(`\n${summaryTable(results)}\n\n${transportTable(results)}\n\n${baselineTable(results)}\n\n${goalsTable(results)}\n\n${realtimeTable(results)}\n\n${accessTable(results.access)}\n`);
  log(`bench: done in ${Math.round(meta.durationS)} s; results in ${files.md} and ${files.json}`);
  const failedGoals = goals(results).filter((g) => g.met === false).length;
  if (failedGoals) log(`bench: ${failedGoals} goal(s) not met (measured, not a failure of the harness)`);
  return 0;
}

process.exitCode = await main();
