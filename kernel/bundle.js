// Part of `npm run build` (kernel/build.js): tsc's output, ~280 ES modules, bundled into the
// files that are loaded by name plus shared chunks. Node's ESM loader costs about a millisecond
// per module before a server can listen (resolution, an async read, linking), most of a boot's
// start-up (issue #33); one module per entry point and a few chunks load in a fraction of it.
//
// - This package's own code is bundled, with ajv and pino (see BUNDLED_PACKAGES); tsyringe,
//   reflect-metadata and the rest stay packages, so an addon that imports one of them shares
//   the very instance the kernel uses.
// - Every file loaded by path from outside its module graph is an entry point and keeps its
//   name: each plugin's and folder's index.js (the plugin loader imports plugins by URL),
//   kernel/main.js (the launcher), the addon API's testing.js, types-command.js (run as a
//   script), uws-loader.js (the benchmark's ceiling). Code splitting keeps one instance of each
//   module across them: an addon importing `streams-kernel/addon` meets the kernel's classes.
// - Chunks go to dist/chunks/, one folder below dist/ like dist/kernel/: a path computed from
//   `import.meta.url` in kernel code means the same there; plugin code that looks for its own
//   files finds the package root by walking up (plugins/control-panel/assets.ts).
// - The other .js files of tsc's output are removed (an import of one would load a second
//   instance of its module and must fail loudly instead); the .d.ts files stay for addons.
// - Without esbuild (an install without dev dependencies) tsc's output is kept as it is.
import { mkdirSync, readdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Loaded by path from outside the module graph, beside every index.js (see above). */
const NAMED_ENTRIES = ['kernel/main.js', 'plugins/addon/testing.js', 'plugins/openapi/types-command.js', 'plugins/http/uws-loader.js'];

/**
 * The packages bundled with our code, with everything they import in turn: 79 CommonJS files of
 * ajv's family and ~27 of pino's (each resolved, read and compiled apart) were ~60 ms of a Node
 * 20 boot. Neither must be the instance an addon imports (addons get the kernel's logger and
 * never share an ajv instance), ajv's code writer is imported with it (kernel/ajv-code-cache.ts:
 * the very classes its validators were compiled with), and pino's transports (worker files
 * found by path) are never started. tsyringe and reflect-metadata stay packages: an addon's
 * decorators must register in the container the kernel resolves from.
 */
const BUNDLED_PACKAGES = new Set(['ajv', 'ajv-formats', 'pino']);

/** esbuild's resolution of bare imports: Node's builtins and other packages stay imports. */
function packages(dir) {
  const ours = fileURLToPath(import.meta.url);
  // As esbuild names importers: absolute, links resolved.
  const output = realpathSync(path.resolve(dir));
  return {
    name: 'bundled-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        // A file of a bundled package (anything outside tsc's output): its own imports come too.
        const fromPackage = !args.importer.startsWith(output + path.sep);
        const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
        if (!fromPackage && !BUNDLED_PACKAGES.has(name)) return { path: args.path, external: true };
        // Found as Node would: from the importing package, or, for our code (which the install
        // test builds outside this folder), from the kernel's own place.
        return { path: createRequire(fromPackage ? args.importer : ours).resolve(args.path) };
      });
    },
  };
}

function jsFiles(folder, base = folder, out = []) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) jsFiles(full, base, out);
    else if (entry.name.endsWith('.js')) out.push(path.relative(base, full));
  }
  return out;
}

/** Bundle tsc's output in `dir` in place; false (nothing changed) when esbuild is not installed. */
export async function bundle(dir) {
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)('esbuild');
  } catch {
    process.stderr.write('build: esbuild is not installed (dev dependency): dist/ keeps one file per module (slower start-up)\n');
    return false;
  }
  const files = jsFiles(dir);
  const entries = files.filter((file) => path.basename(file) === 'index.js' || NAMED_ENTRIES.includes(file.split(path.sep).join('/')));
  const out = `${dir}.bundle`;
  rmSync(out, { recursive: true, force: true });
  try {
    await esbuild.build({
      entryPoints: entries.map((file) => path.join(dir, file)),
      outdir: out,
      outbase: dir,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      plugins: [packages(dir)],
      // Not keepNames: it wraps every function, the closures a request makes included, in a
      // defineProperty call (GET one lost ~10%, paired runs). A name esbuild had to change (two
      // modules' top-level names colliding: none today) shows only in logs.
      keepNames: false,
      chunkNames: 'chunks/[name]-[hash]',
      // Bundled CommonJS (pino) requires Node's builtins: esbuild's ESM output looks for a
      // \`require\` in scope (ours of the same name get renamed).
      banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
      // Stack traces point into the TypeScript sources through tsc's maps.
      sourcemap: 'linked',
      logLevel: 'warning',
    });
    for (const file of files) {
      rmSync(path.join(dir, file), { force: true });
      rmSync(path.join(dir, `${file}.map`), { force: true });
    }
    for (const file of jsFiles(out)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      renameSync(path.join(out, file), path.join(dir, file));
      renameSync(path.join(out, `${file}.map`), path.join(dir, `${file}.map`));
    }
  } finally {
    // A failed bundle leaves no folder beside dist/ (build.js removes the fresh tree itself).
    rmSync(out, { recursive: true, force: true });
  }
  return true;
}
