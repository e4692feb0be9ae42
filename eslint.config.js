// ESLint (flat config, typescript-eslint): `npm run lint`, and a step of .ci/run.
// Syntax-only rules (no type information), so the whole tree lints in seconds; the compiler
// (`npm run typecheck`) does the type checks. Two rules of our own (docs/architecture.md):
// - boundaries/plugin-imports: a plugin imports another plugin only through its index.ts,
//   and kernel/ (the microkernel and its tools) never imports a plugin;
// - boundaries/disable-needs-reason: an `eslint-disable` comment says why (`-- reason`).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const ROOT = path.dirname(fileURLToPath(import.meta.url));

/** `plugins/<name>/...` (or a one-file plugin `plugins/<name>.ts`) -> name; undefined outside plugins/. */
function pluginOf(file) {
  const relative = path.relative(ROOT, file).split(path.sep);
  if (relative[0] !== 'plugins' || relative.length < 2) return undefined;
  return relative.length === 2 ? relative[1].replace(/\.[cm]?[jt]s$/, '') : relative[1];
}

function inKernel(file) {
  return path.relative(ROOT, file).split(path.sep)[0] === 'kernel';
}

const pluginImports = {
  meta: {
    type: 'problem',
    docs: { description: 'plugins import each other only through index.ts; kernel/ imports no plugin' },
    schema: [{ type: 'object', properties: { allowKernel: { type: 'array', items: { type: 'string' } } }, additionalProperties: false }],
    messages: {
      internals: 'plugin "{{from}}" imports "{{spec}}", an internal of plugin "{{to}}": import it from {{index}} (add the export there)',
      kernel: 'kernel/ imports the plugin "{{to}}" ("{{spec}}"): the microkernel knows no plugin (take a service reference, or move this code into a plugin)',
    },
  },
  create(context) {
    const file = context.filename;
    const from = pluginOf(file);
    const allowKernel = (context.options[0]?.allowKernel ?? []).map((p) => path.join(ROOT, p));
    const kernel = inKernel(file) && !allowKernel.some((folder) => file.startsWith(folder + path.sep));
    if (from === undefined && !kernel) return {};
    const check = (node, spec) => {
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), spec);
      const to = pluginOf(target);
      if (to === undefined || to === from) return;
      if (kernel) return context.report({ node, messageId: 'kernel', data: { to, spec } });
      const relative = path.relative(path.join(ROOT, 'plugins', to), target);
      if (relative === 'index.js' || relative === 'index.ts' || relative === '') return;
      context.report({ node, messageId: 'internals', data: { from, to, spec, index: `plugins/${to}/index.ts` } });
    };
    return {
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
    };
  },
};

const disableNeedsReason = {
  meta: {
    type: 'suggestion',
    docs: { description: 'an eslint-disable comment gives its reason after `--`' },
    schema: [],
    messages: { reason: 'say why this rule does not apply here: `{{directive}} <rule> -- <reason>`' },
  },
  create(context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          const match = /^\s*(eslint-disable(?:-next-line|-line)?)\b(.*)$/s.exec(comment.value);
          if (match && !/\s--\s*\S/.test(match[2])) context.report({ loc: comment.loc, messageId: 'reason', data: { directive: match[1] } });
        }
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'plugins/control-panel/ui/vendor/**', '**/*.d.ts', 'benchmarks/**', 'test/**/fixtures/**', '**/.ajv-cache/**'] },
  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.base],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { boundaries: { rules: { 'plugin-imports': pluginImports, 'disable-needs-reason': disableNeedsReason } } },
    rules: {
      // kernel/cli is the `streams` command: an application of the kernel that boots the core
      // plugins and drives their services (check, export, import, migrate), not the microkernel.
      'boundaries/plugin-imports': ['error', { allowKernel: ['kernel/cli'] }],
      'boundaries/disable-needs-reason': 'error',
    },
  },
  {
    files: ['kernel/**/*.ts', 'plugins/**/*.ts', 'test/**/*.ts'],
    extends: [tseslint.configs.recommended],
    rules: {
      // `_name` marks a parameter or binding kept on purpose (a handler's signature, a skipped element).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
);
