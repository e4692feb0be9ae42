import { isAppError } from '../errors.js';
import { ENTRIES, type EntriesService } from '../../plugins/entries/index.js';
import { STREAM_REGISTRY, type StreamRegistry } from '../../plugins/streams/index.js';
import { absoluteFile, CliError, parseCommand, required } from './args.js';
import { clearState, readState, saveState, type ImportState } from './import-state.js';
import { readLines, type ExportLine } from './ndjson.js';
import { withOffline } from './offline-kernel.js';
import { Progress } from './progress.js';

const USAGE = `Usage: streams import --config <file> --in <file|-> [--resume] [--state <file>] [--batch N]

  Writes the lines of an export (NDJSON) through the entries service: validated, hooked
  and durable like an API PUT, --batch lines at a time (default 100). A definition line
  creates its stream when the application has none of that id (an existing one is kept).
  Progress is recorded after each batch in --state (default <in>.import-state); after an
  interruption, --resume continues after the last finished batch.
  Prints created/updated/refused counts and each refused line with its reason; exits 1
  when a line was refused.`;

/** Why a line is refused: malformed, or the API's own messages for a 4xx; anything else stops the import. */
function lineProblem(error: unknown): string {
  return error instanceof SyntaxError || error instanceof RefusedLine ? error.message : reasonOf(error);
}

/** The API's own messages for a 4xx, one line. */
function reasonOf(error: unknown): string {
  if (isAppError(error) && error.status < 500) {
    const details = error.errors.map((e) => e.message).filter((m) => m !== error.message);
    return [error.message, ...details].join(' ');
  }
  throw error;
}

/** A line that cannot be written as it is (not an export line, or of a stream this application lacks): refused, the import goes on. */
class RefusedLine extends Error {}

function parseLine(text: string): ExportLine {
  const value = JSON.parse(text) as Partial<ExportLine>;
  if (value === null || typeof value !== 'object' || (value.kind !== 'entry' && value.kind !== 'definition') || typeof value.stream !== 'string' || value.data === null || typeof value.data !== 'object' || Array.isArray(value.data)) {
    throw new RefusedLine('not a line of `streams export`: {"kind":"entry"|"definition","stream":"...","data":{...}}');
  }
  return value as ExportLine;
}

/** What a line's batch is made of: definitions, or one stream's entries (a malformed line goes with anything). */
function groupOf(text: string): string {
  try {
    const line = JSON.parse(text) as Partial<ExportLine>;
    return line.kind === 'definition' ? 'definition' : `entry:${String(line.stream)}`;
  } catch {
    return 'malformed';
  }
}

/** One line written: which counter it adds to. */
async function writeLine(line: ExportLine, entries: EntriesService, registry: StreamRegistry): Promise<'created' | 'updated' | 'definitions' | 'kept'> {
  if (line.kind === 'definition') {
    if (registry.has(line.stream)) return 'kept';
    await registry.create({ ...line.data, id: line.stream });
    return 'definitions';
  }
  if (!registry.has(line.stream)) throw new RefusedLine(`Stream [${line.stream}] not found: create it first, or export with --definitions so the file carries it.`);
  const definition = registry.require(line.stream);
  const { created } = await entries.replace(line.stream, entries.keyOf(definition, line.data), line.data);
  return created ? 'created' : 'updated';
}

/** `streams import`: restore an export into this application. */
export async function importCommand(argv: string[]): Promise<number> {
  const { done, values } = parseCommand(argv, USAGE, {
    config: { type: 'string', short: 'c' },
    in: { type: 'string', short: 'i' },
    resume: { type: 'boolean' },
    state: { type: 'string' },
    batch: { type: 'string' },
  });
  if (done !== undefined) {
    process.stdout.write(done);
    return 0;
  }
  const configFile = required(values.config, '--config', USAGE);
  const input = absoluteFile(required(values.in, '--in', USAGE));
  const batchSize = values.batch === undefined ? 100 : Number(values.batch);
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new CliError(`--batch must be a positive integer, got "${values.batch}"`, 2);
  const stateFile = values.state !== undefined ? absoluteFile(values.state) : input === '-' ? undefined : `${input}.import-state`;
  if (values.resume && stateFile === undefined) throw new CliError('--resume of stdin needs --state <file>', 2);
  let state: ImportState = { input, line: 0, created: 0, updated: 0, definitions: 0, refused: [] };
  if (values.resume && stateFile !== undefined) {
    const saved = await readState(stateFile);
    if (saved !== undefined && saved.input !== input) throw new CliError(`${stateFile} records an import of ${saved.input}, not of ${input}`);
    if (saved !== undefined) state = saved;
  }
  return withOffline(configFile, {}, async (kernel) => {
    const entries = kernel.get(ENTRIES);
    const registry = kernel.get(STREAM_REGISTRY);
    const progress = new Progress('import');
    let batch: Array<{ number: number; text: string }> = [];
    /** The group of the lines in `batch` (groupOf of its first). */
    let batchGroup = '';
    const run = async (): Promise<void> => {
      // Definition lines (an export's first lines) are created before any entry, in as many
      // passes as their relations need: a stream relating to another needs it to exist first.
      if (batchGroup === 'definition') return runDefinitions();
      // Lines of one batch are written together (each entry has its own lock).
      const results = await Promise.all(
        batch.map(async ({ number, text }) => {
          try {
            return { number, counter: await writeLine(parseLine(text), entries, registry) };
          } catch (error) {
            return { number, reason: lineProblem(error) };
          }
        }),
      );
      for (const result of results) {
        if ('reason' in result) state.refused.push({ line: result.number, reason: result.reason! });
        else if (result.counter !== 'kept') state[result.counter]++;
      }
      await finishBatch();
    };
    const runDefinitions = async (): Promise<void> => {
      let waiting = batch.map(({ number, text }) => ({ number, text, reason: '' }));
      for (let progress = true; waiting.length > 0 && progress; ) {
        progress = false;
        const next: typeof waiting = [];
        for (const line of waiting) {
          try {
            const counter = await writeLine(parseLine(line.text), entries, registry);
            if (counter === 'definitions') state.definitions++;
            progress = true;
          } catch (error) {
            next.push({ ...line, reason: lineProblem(error) });
          }
        }
        waiting = next;
      }
      for (const line of waiting) state.refused.push({ line: line.number, reason: line.reason });
      await finishBatch();
    };
    const finishBatch = async (): Promise<void> => {
      state.line = batch[batch.length - 1]!.number;
      batch = [];
      if (stateFile !== undefined) await saveState(stateFile, state);
      progress.update(state.line, `${state.created} created, ${state.updated} updated, ${state.refused.length} refused`);
    };
    try {
      for await (const line of readLines(input)) {
        if (line.number <= state.line) continue;
        // A batch holds the definitions, or entries of one stream: the entries of a stream
        // that others relate to are written before theirs (export puts them first).
        const group = groupOf(line.text);
        if (batch.length > 0 && group !== batchGroup) await run();
        if (batch.length === 0) batchGroup = group;
        batch.push(line);
        if (batch.length >= batchSize) await run();
      }
      if (batch.length > 0) await run();
    } finally {
      progress.end();
    }
    if (stateFile !== undefined) await clearState(stateFile);
    process.stdout.write(`import: ${state.created} created, ${state.updated} updated, ${state.refused.length} refused${state.definitions > 0 ? `, ${state.definitions} streams created` : ''}\n`);
    for (const refusal of state.refused) process.stdout.write(`  line ${refusal.line}: ${refusal.reason}\n`);
    return state.refused.length > 0 ? 1 : 0;
  });
}
