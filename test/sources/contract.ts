/**
 * The source contract suite, as our own tests run it: the suite itself lives in the addon
 * SDK (plugins/addon/source-contract.ts, exported by `streams-kernel/testing`), so an addon's
 * source type runs the very same cases; this file binds it to vitest.
 *
 *   runSourceContract('database', async () => ({ create, reopen, cleanup }), { source: { type: 'database' } });
 */
import * as vitest from 'vitest';
import { runSourceContract as runWith, type ContractOptions, type SourceHarness } from '../../plugins/addon/source-contract.js';

export { contractDefinition, FILMS, type ContractOptions, type DiskEditor, type SourceHarness } from '../../plugins/addon/source-contract.js';

export function runSourceContract(name: string, makeHarness: () => Promise<SourceHarness>, options: ContractOptions): void {
  runWith(vitest, name, makeHarness, options);
}
