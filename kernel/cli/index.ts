// tsyringe (the kernel's container) needs the polyfill before any subcommand loads a plugin.
import '../container.js';
import { kernelVersion } from '../version.js';
import { CliError } from './args.js';

/**
 * The `streams` command: one subcommand a file in this folder, loaded only when asked
 * for (so `streams --version` never loads a plugin). A subcommand returns its exit code,
 * or undefined when it keeps running (serve).
 */
const COMMANDS: Record<string, { summary: string; load: () => Promise<(argv: string[]) => Promise<number | undefined>> }> = {
  serve: { summary: 'serve an application (node kernel/boot.js takes the same flags)', load: async () => (await import('./serve.js')).serve },
  init: { summary: 'create a new application in a folder', load: async () => (await import('./init.js')).init },
  check: { summary: 'validate the config, definitions and entries without serving (exit 1 on an error)', load: async () => (await import('./check.js')).check },
  export: { summary: 'write every entry (and definition) as NDJSON: backups, moves', load: async () => (await import('./export.js')).exportCommand },
  import: { summary: 'write an export through the entries service, resumable', load: async () => (await import('./import.js')).importCommand },
  migrate: { summary: 'move streams to another source (files -> MongoDB), verified before switching', load: async () => (await import('./migrate.js')).migrate },
  types: { summary: 'TypeScript types of a running server\'s streams', load: async () => (await import('./types.js')).types },
};

const USAGE = `Usage: streams <command> [flags]     (streams <command> --help for its flags)

${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(9)}${summary}`)
  .join('\n')}

  --version   the kernel's version
  --help      this text`;

export async function run(argv: string[]): Promise<number | undefined> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return first === undefined ? 2 : 0;
  }
  if (first === '--version' || first === '-v' || first === 'version') {
    process.stdout.write(`${kernelVersion()}\n`);
    return 0;
  }
  const command = COMMANDS[first];
  if (command === undefined) {
    process.stderr.write(`streams: unknown command "${first}"\n${USAGE}\n`);
    return 2;
  }
  try {
    return await (await command.load())(rest);
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`streams ${first}: ${error.message}\n`);
      return error.exitCode;
    }
    throw error;
  }
}
