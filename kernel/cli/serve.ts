import { main } from '../main.js';

/** `streams serve`: the server, with the flags `node kernel/boot.js` has always taken. */
export async function serve(argv: string[]): Promise<number | undefined> {
  await main(argv);
  // The server runs until a signal: no exit code now.
  return undefined;
}
