import { ENTRIES } from '../../plugins/entries/index.js';
import { FIELDS } from '../../plugins/fields/index.js';
import { definitionToJson, STREAM_REGISTRY, type StreamDefinition } from '../../plugins/streams/index.js';
import { absoluteFile, CliError, parseCommand, required } from './args.js';
import { LineSink, type ExportLine } from './ndjson.js';
import { withOffline } from './offline-kernel.js';
import { Progress } from './progress.js';
import { relatedFirst } from './stream-order.js';

const USAGE = `Usage: streams export --config <file> --out <file|-> [--stream S ...] [--definitions]

  Every entry of every stream (or of the --stream ones) as NDJSON, one line an entry,
  read through the entries service a page at a time. --out - writes to stdout (nothing
  but data); a file is written whole or not at all. A progress bar shows on a terminal.
  --definitions   the stream definitions first, so \`streams import\` can create them`;

const PAGE = 500;

/** The streams asked for, in the registry's order; an unknown one is an error before anything is written. */
export function pickStreams(all: StreamDefinition[], wanted: string[] | undefined): StreamDefinition[] {
  if (wanted === undefined || wanted.length === 0) return all;
  const byId = new Map(all.map((d) => [d.id, d]));
  const missing = wanted.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new CliError(`no such stream: ${missing.join(', ')}`);
  return wanted.map((id) => byId.get(id)!);
}

/** `streams export`: a backup (or the input of `streams import`) as NDJSON. */
export async function exportCommand(argv: string[]): Promise<number> {
  const { done, values } = parseCommand(argv, USAGE, {
    config: { type: 'string', short: 'c' },
    out: { type: 'string', short: 'o' },
    stream: { type: 'string', multiple: true },
    definitions: { type: 'boolean' },
  });
  if (done !== undefined) {
    process.stdout.write(done);
    return 0;
  }
  const configFile = required(values.config, '--config', USAGE);
  const out = absoluteFile(required(values.out, '--out', USAGE));
  return withOffline(configFile, {}, async (kernel) => {
    const entries = kernel.get(ENTRIES);
    const fields = kernel.get(FIELDS);
    const relatedOf = (definition: StreamDefinition): string[] => {
      try {
        return fields.relations(definition).map((relation) => relation.stream);
      } catch {
        return [];
      }
    };
    // Related streams first: `streams import` replays the lines in order.
    const streams = relatedFirst(pickStreams(kernel.get(STREAM_REGISTRY).list(), values.stream), relatedOf);
    const sink = await LineSink.open(out);
    const progress = new Progress('export');
    let written = 0;
    try {
      if (values.definitions) {
        for (const definition of streams) await sink.write(JSON.stringify({ kind: 'definition', stream: definition.id, data: definitionToJson(definition) } satisfies ExportLine));
      }
      for (const definition of streams) {
        for (let page = 1; ; page++) {
          const result = await entries.list(definition.id, { where: [], orderBy: [], page, perPage: PAGE });
          if (page === 1) progress.setTotal(result.total);
          for (const entry of result.entries) {
            await sink.write(JSON.stringify({ kind: 'entry', stream: definition.id, data: entry } satisfies ExportLine));
            written++;
          }
          progress.update((page - 1) * PAGE + result.entries.length, definition.id);
          if (result.entries.length < PAGE) break;
        }
      }
      await sink.close();
    } catch (error) {
      await sink.abort();
      throw error;
    } finally {
      progress.end();
    }
    process.stderr.write(`export: ${written} entries of ${streams.length} streams${values.definitions ? ' with their definitions' : ''}${out === '-' ? '' : ` to ${out}`}\n`);
    return 0;
  });
}
