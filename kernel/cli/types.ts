import { kernelVersion } from '../version.js';

/** `streams types`: the TypeScript types of a running server's streams (plugins/openapi/types-command.ts). */
export async function types(argv: string[]): Promise<number> {
  if (argv.includes('--version')) {
    process.stdout.write(`${kernelVersion()}\n`);
    return 0;
  }
  // Loaded on demand: openapi-typescript is large and only this subcommand needs it.
  const { typesCommand } = await import('../../plugins/openapi/types-command.js');
  return typesCommand(argv);
}
