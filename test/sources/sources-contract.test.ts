import { runSourceContract } from './contract.js';
import { builtInHarness } from './harness.js';

runSourceContract('filebase json', builtInHarness(), { source: { type: 'filebase', format: 'json' }, fileKeys: true });
runSourceContract('filebase yaml', builtInHarness(), { source: { type: 'filebase', format: 'yaml' }, fileKeys: true });
runSourceContract('filebase md', builtInHarness(), { source: { type: 'filebase', format: 'md' }, fileKeys: true });
runSourceContract('filebase with cache', builtInHarness(), { source: { type: 'filebase' }, fileKeys: true, cache: { enabled: true, ttl: 60 } });
runSourceContract('file json', builtInHarness(), { source: { type: 'file', format: 'json' } });
runSourceContract('file csv', builtInHarness(), { source: { type: 'file', format: 'csv' } });
runSourceContract('self', builtInHarness({ self: true }), { source: { type: 'self' } });
runSourceContract('collection', async () => {
  const h = await builtInHarness()();
  // Entries kept in the definition only: nothing to reopen, no files to edit by hand.
  return { create: h.create, cleanup: h.cleanup };
}, { source: { type: 'collection' } });
