import type { Kernel } from '../kernel.js';
import { SOURCES, type Source } from '../../plugins/sources/index.js';
import { definitionToJson, STREAM_REGISTRY, keyNameOf, type StreamDefinition } from '../../plugins/streams/index.js';
import { CliError, parseCommand, required } from './args.js';
import { EntryDigest } from './digest.js';
import { pickStreams } from './export.js';
import { withOffline } from './offline-kernel.js';
import { Progress } from './progress.js';

const USAGE = `Usage: streams migrate --config <file> --to <source> [--stream S ...] [--copy | --switch] [--overwrite]

  Moves streams from their current source to another, e.g. from the embedded files to
  MongoDB: --to database (with the mongodb plugin in the config), or a whole source
  object: --to '{"type":"database","connection":"default","table":"books"}'.
  Without --copy or --switch it is a dry run: what would move, with counts, writes nothing.
  --copy       copy every entry, then verify the count and a content digest per stream
  --switch     copy, verify, and only when every stream verified rewrite the definitions
               to the new source (the old data stays where it was, untouched)
  --overwrite  empty a target that already holds entries first (a re-run); refused otherwise`;

export interface MigrateOptions {
  to: Record<string, unknown>;
  streams?: string[];
  mode: 'dry-run' | 'copy' | 'switch';
  overwrite?: boolean;
  /** Told of each stream's progress (the command draws a bar). */
  onProgress?: (stream: string, done: number, total: number) => void;
}

export interface StreamReport {
  stream: string;
  from: string;
  to: string;
  entries: number;
  digest: string;
  /** After a copy: the target's count and digest, and whether both match. */
  copied?: { entries: number; digest: string; verified: boolean };
  switched?: boolean;
  problem?: string;
}

const PAGE = 1000;

/** Every entry of a source in key order, a page at a time. */
async function* entriesOf(source: Source): AsyncGenerator<Record<string, unknown>> {
  for (let skip = 0; ; skip += PAGE) {
    const page = await source.query({ where: [], orderBy: [], skip, limit: PAGE });
    yield* page;
    if (page.length < PAGE) return;
  }
}

async function digestOf(source: Source): Promise<{ entries: number; digest: string }> {
  const digest = new EntryDigest();
  for await (const entry of entriesOf(source)) digest.add(entry);
  return { entries: digest.count, digest: digest.hex() };
}

/** The definition as it would read on the new source (built and checked, not registered). */
function targetDefinition(definition: StreamDefinition, to: Record<string, unknown>): Record<string, unknown> {
  const raw = definitionToJson(definition);
  const config = (raw.config ?? {}) as Record<string, unknown>;
  return { ...raw, config: { ...config, source: to } };
}

/**
 * Copy streams to another source, verify each (count and digest of every entry, read back
 * from the target), and switch the definitions only once all of them verified. Works on a
 * booted kernel (the command boots one offline; tests pass their own).
 */
export async function migrateStreams(kernel: Kernel, options: MigrateOptions): Promise<StreamReport[]> {
  const registry = kernel.get(STREAM_REGISTRY);
  const sources = kernel.get(SOURCES);
  const toType = String(options.to.type);
  if (!sources.hasType(toType)) throw new CliError(`--to: no source type "${toType}" is registered (known: ${sources.types().join(', ')}); a plugin may be missing from the config`);
  const reports: StreamReport[] = [];
  const targets: Array<{ definition: StreamDefinition; raw: Record<string, unknown> }> = [];
  for (const definition of pickStreams(registry.list(), options.streams)) {
    const current = sources.for(definition);
    const report: StreamReport = { stream: definition.id, from: current.type, to: toType, ...(await digestOf(current)) };
    reports.push(report);
    // Every key --to names already holds that value (the stored source may hold defaults besides).
    const source = definition.config.source as unknown as Record<string, unknown>;
    if (current.type === toType && Object.entries(options.to).every(([key, value]) => JSON.stringify(source[key]) === JSON.stringify(value))) {
      report.problem = 'already on this source';
      continue;
    }
    let raw: Record<string, unknown>;
    let target: Source;
    try {
      raw = targetDefinition(definition, options.to);
      target = sources.detached(await registry.build(raw, definition.id));
    } catch (error) {
      report.problem = `the definition does not fit the new source: ${(error as Error).message}`;
      continue;
    }
    if (options.mode === 'switch' && !target.capabilities.persistent) {
      report.problem = `the "${toType}" source keeps entries in memory only: switching would lose them (--copy verifies without switching)`;
      await target.close();
      continue;
    }
    try {
      await target.open();
      const held = await target.count([]);
      if (held > 0 && options.mode !== 'dry-run') {
        if (!options.overwrite) {
          report.problem = `the target already holds ${held} entries: --overwrite empties it first`;
          continue;
        }
        await target.truncate();
      }
      if (options.mode === 'dry-run') continue;
      const keyName = keyNameOf(definition);
      let done = 0;
      for await (const entry of entriesOf(current)) {
        await target.put(entry[keyName] as string | number, entry, { mode: 'create' });
        options.onProgress?.(definition.id, ++done, report.entries);
      }
      const copied = await digestOf(target);
      report.copied = { ...copied, verified: copied.entries === report.entries && copied.digest === report.digest };
      if (!report.copied.verified) report.problem = `verification failed: ${report.entries} entries (${report.digest.slice(0, 12)}) became ${copied.entries} (${copied.digest.slice(0, 12)})`;
      else targets.push({ definition, raw });
    } finally {
      await target.close();
    }
  }
  // Only once every stream copied and verified: a half-switched application is the one outcome to avoid.
  if (options.mode === 'switch' && reports.every((r) => r.problem === undefined)) {
    for (const { definition, raw } of targets) {
      await registry.replace(definition.id, raw);
      reports.find((r) => r.stream === definition.id)!.switched = true;
    }
  }
  return reports;
}

function parseTarget(value: string): Record<string, unknown> {
  if (!value.trimStart().startsWith('{')) return { type: value };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new CliError(`--to is not a source type nor a JSON object: ${(error as Error).message}`, 2);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || typeof (parsed as { type?: unknown }).type !== 'string') throw new CliError('--to needs a "type"', 2);
  return parsed as Record<string, unknown>;
}

/** `streams migrate`: move streams to another source, verified before anything switches. */
export async function migrate(argv: string[]): Promise<number> {
  const { done, values } = parseCommand(argv, USAGE, {
    config: { type: 'string', short: 'c' },
    to: { type: 'string' },
    stream: { type: 'string', multiple: true },
    copy: { type: 'boolean' },
    switch: { type: 'boolean' },
    overwrite: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (done !== undefined) {
    process.stdout.write(done);
    return 0;
  }
  const configFile = required(values.config, '--config', USAGE);
  const to = parseTarget(required(values.to, '--to', USAGE));
  const mode = values.switch ? 'switch' : values.copy ? 'copy' : 'dry-run';
  const progress = new Progress('migrate');
  const reports = await withOffline(configFile, {}, (kernel) =>
    migrateStreams(kernel, {
      to,
      streams: values.stream,
      mode,
      overwrite: values.overwrite,
      onProgress: (stream, n, total) => {
        progress.setTotal(total);
        progress.update(n, stream);
      },
    }),
  ).finally(() => progress.end());
  if (values.json) process.stdout.write(`${JSON.stringify({ mode, streams: reports })}\n`);
  else {
    for (const r of reports) {
      const state = r.problem ? `NOT MOVED: ${r.problem}` : r.switched ? 'verified, switched' : r.copied ? 'copied, verified' : 'would move';
      process.stdout.write(`${r.stream}: ${r.from} -> ${r.to}, ${r.entries} entries, sha256 ${r.digest.slice(0, 16)}: ${state}\n`);
    }
    if (mode === 'dry-run') process.stdout.write('dry run: nothing written (--copy copies and verifies, --switch also moves the definitions)\n');
    else if (mode === 'switch' && reports.some((r) => r.problem)) process.stdout.write('no definition switched: every stream must verify first\n');
  }
  return reports.some((r) => r.problem !== undefined && r.problem !== 'already on this source') ? 1 : 0;
}
