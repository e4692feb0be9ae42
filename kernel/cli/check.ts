import { Writable } from 'node:stream';
import pino from 'pino';
import { ENTRIES } from '../../plugins/entries/index.js';
import { STREAM_REGISTRY } from '../../plugins/streams/index.js';
import { CliError, parseCommand, required } from './args.js';
import { withOffline } from './offline-kernel.js';

const USAGE = `Usage: streams check --config <file> [--json]

  Loads the config, the plugins, every stream definition and every entry as a server
  would, without listening. Prints each problem (file, JSON path, problem); exits 1 on
  any error, 0 when there are only warnings (printed) or none.
  --json   one JSON document: {"ok", "errors": [...], "warnings": [...]}`;

interface Problem {
  level: 'error' | 'warning';
  file?: string;
  path?: string;
  problem: string;
  stream?: string;
}

/** One problem from a log line the boot wrote at warn or above (the lines a server would print). */
function problemOf(record: Record<string, unknown>): Problem {
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const details = ['reason', 'problems', 'parent']
    .filter((key) => record[key] !== undefined)
    .map((key) => `${key}: ${typeof record[key] === 'string' ? String(record[key]) : JSON.stringify(record[key])}`);
  const err = record.err as { message?: string } | undefined;
  const message = text(record.problem) ?? text(record.msg) ?? 'problem';
  return {
    level: typeof record.level === 'number' && record.level >= 50 ? 'error' : 'warning',
    file: text(record.file) ?? text(record.path),
    path: text(record.at),
    problem: [message, ...details, ...(err?.message && !message.includes(err.message) ? [err.message] : [])].join('; '),
    stream: text(record.stream),
  };
}

/** `streams check`: is this application valid, without serving it? */
export async function check(argv: string[]): Promise<number> {
  const { done, values } = parseCommand(argv, USAGE, { config: { type: 'string', short: 'c' }, json: { type: 'boolean' } });
  if (done !== undefined) {
    process.stdout.write(done);
    return 0;
  }
  const configFile = required(values.config, '--config', USAGE);
  const problems: Problem[] = [];
  // Every line the boot logs at warn or above is a problem an operator would see in production.
  const collector = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() !== '') problems.push(problemOf(JSON.parse(line) as Record<string, unknown>));
      }
      callback();
    },
  });
  const logger = pino({ level: 'warn' }, collector);
  let streams = 0;
  let entries = 0;
  try {
    await withOffline(configFile, { reportAll: true, logger }, async (kernel) => {
      const service = kernel.get(ENTRIES);
      for (const definition of kernel.get(STREAM_REGISTRY).list()) {
        streams++;
        try {
          // Loads the stream's entries (sources load lazily); unreadable files are logged as problems.
          entries += (await service.list(definition.id, { where: [], orderBy: [], page: 1, perPage: 1 })).total;
        } catch (error) {
          problems.push({ level: 'error', file: definition.file, stream: definition.id, problem: `entries cannot be loaded: ${(error as Error).message}` });
        }
      }
    });
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    problems.push({ level: 'error', problem: error.message });
  }
  const errors = problems.filter((p) => p.level === 'error');
  const warnings = problems.filter((p) => p.level === 'warning');
  if (values.json) {
    const strip = ({ level: _level, ...rest }: Problem) => rest;
    process.stdout.write(`${JSON.stringify({ ok: errors.length === 0, streams, entries, errors: errors.map(strip), warnings: warnings.map(strip) })}\n`);
  } else {
    for (const p of problems) {
      const where = [p.file, p.path ? `at ${p.path}` : undefined].filter(Boolean).join(' ');
      process.stdout.write(`${p.level === 'error' ? 'error' : 'warning'}: ${where ? `${where}: ` : ''}${p.problem}\n`);
    }
    process.stdout.write(`${streams} streams, ${entries} entries: ${errors.length} errors, ${warnings.length} warnings\n`);
  }
  return errors.length > 0 ? 1 : 0;
}
