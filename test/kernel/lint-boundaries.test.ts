import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * #30 item 5: the import rule of docs/architecture.md is enforced by `npm run lint`
 * (eslint.config.js): a plugin imports another plugin only through its index.ts, kernel/
 * imports no plugin, and an eslint-disable comment says why.
 */
const REPO = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const eslint = new ESLint({ cwd: REPO });

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(REPO, file) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('npm run lint: boundaries', () => {
  it('refuses a plugin importing another plugin\'s internals, and says where to import from', async () => {
    expect(await problems('plugins/api/sneaky.ts', "import { MemorySource } from '../sources/memory-source.js';\nexport const x = MemorySource;\n")).toEqual([
      'boundaries/plugin-imports: plugin "api" imports "../sources/memory-source.js", an internal of plugin "sources": import it from plugins/sources/index.ts (add the export there)',
    ]);
    expect(await problems('plugins/api/deep/sneaky.ts', "export type { Source } from '../../sources/contracts.js';\n")).toHaveLength(1);
    // A one-file plugin and a JavaScript addon folder are plugins too.
    expect(await problems('plugins/evil.ts', "export { MemorySource } from './sources/memory-source.js';\n")).toHaveLength(1);
    expect(await problems('plugins/evil-addon/index.js', "export { MemorySource } from '../sources/memory-source.js';\n")).toHaveLength(1);
  });

  it('accepts an import through index.ts, and a plugin\'s own files', async () => {
    expect(await problems('plugins/api/fine.ts', "import { MemorySource } from '../sources/index.js';\nimport { API } from './tokens.js';\nexport const x = [MemorySource, API];\n")).toEqual([]);
    expect(await problems('plugins/sources/filebase/fine.ts', "import { MemorySource } from '../memory-source.js';\nexport const x = MemorySource;\n")).toEqual([]);
  });

  it('refuses kernel/ importing a plugin, even through its index.ts', async () => {
    expect(await problems('kernel/sneaky.ts', "import { SOURCES } from '../plugins/sources/index.js';\nexport const x = SOURCES;\n")).toEqual([
      'boundaries/plugin-imports: kernel/ imports the plugin "sources" ("../plugins/sources/index.js"): the microkernel knows no plugin (take a service reference, or move this code into a plugin)',
    ]);
  });

  it('refuses an eslint-disable comment without a reason', async () => {
    const bare = await problems('kernel/x.ts', '// eslint-disable-next-line @typescript-eslint/no-explicit-any\nexport type X = any;\n');
    expect(bare).toContain('boundaries/disable-needs-reason: say why this rule does not apply here: `eslint-disable-next-line <rule> -- <reason>`');
    expect(await problems('kernel/x.ts', '// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test of the rule\nexport type X = any;\n')).toEqual([]);
  });
});
