import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ensureDirDurable, writeFileDurable } from '../tools/durable-fs.js';
import { CliError, parseCommand } from './args.js';

const USAGE = `Usage: streams init <dir>

  A new application in <dir> (created; it must be empty): config.json, one example
  stream (notes) with an entry, and a README. Then: streams serve --config <dir>/config.json`;

const CONFIG = { http: { host: '127.0.0.1', port: 8080 }, streams: { path: 'streams', data_path: 'streams/data' }, log: { level: 'info' } };

const NOTES = {
  id: 'notes',
  name: 'Notes',
  description: 'An example stream: edit or delete streams/notes.json, add your own next to it.',
  fields: {
    id: { type: 'integer', required: true },
    title: { type: 'string', required: true, rules: ['max:200'] },
    body: { type: 'string' },
    done: { type: 'boolean' },
  },
};

const FIRST_NOTE = { id: 1, title: 'Hello', body: 'The first entry of the notes stream.', done: false };

const README = `# A Streams Kernel application

- \`config.json\`: the server's settings (docs/configuration.md of streams-kernel).
- \`streams/<id>.json\`: one stream definition per file (docs/definitions.md).
- \`streams/data/<id>/<key>.json\`: the entries of each stream.

\`\`\`sh
npx streams serve --config config.json     # serve it (http://127.0.0.1:8080/api/streams)
npx streams check --config config.json     # validate definitions and entries without serving
npx streams export --config config.json --definitions --out backup.ndjson
\`\`\`
`;

/** `streams init <dir>`: a new application that `streams serve` boots as it is. */
export async function init(argv: string[]): Promise<number> {
  const { done, positionals } = parseCommand(argv, USAGE, {}, true);
  if (done !== undefined) {
    process.stdout.write(done);
    return 0;
  }
  if (positionals.length !== 1) throw new CliError(`one folder is required\n${USAGE}`, 2);
  const dir = path.resolve(positionals[0]!);
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new CliError(`${dir} is not empty: init only writes into a new or empty folder`);
  const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  await ensureDirDurable(path.join(dir, 'streams', 'data', 'notes'));
  await writeFileDurable(path.join(dir, 'config.json'), json(CONFIG));
  await writeFileDurable(path.join(dir, 'streams', 'notes.json'), json(NOTES));
  await writeFileDurable(path.join(dir, 'streams', 'data', 'notes', '1.json'), json(FIRST_NOTE));
  await writeFileDurable(path.join(dir, 'README.md'), README);
  process.stdout.write(`streams: created an application in ${dir}\n  streams serve --config ${path.join(dir, 'config.json')}\n`);
  return 0;
}
