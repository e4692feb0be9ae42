import { createRequire } from 'node:module';
import type * as Tsyringe from 'tsyringe';

/**
 * The DI container every kernel makes its own child of, with the reflect-metadata polyfill
 * tsyringe needs loaded first (so the order holds however the modules are bundled or which
 * entry point loads first).
 *
 * Both are CommonJS packages, and they are required, not imported (issue #33, start-up): an
 * ES `import` of CommonJS makes Node scan the package's source for its export names
 * (cjs-module-lexer, following tsyringe's re-exports file by file) and wrap each module for the
 * ES loader. That cost ~60 ms of every boot on Node 20 and ~35 ms on Node 22, against ~17 and
 * ~15 ms required. An addon that imports `tsyringe` gets this same module (one require cache),
 * so its decorators register in the kernel's container.
 */
const require = createRequire(import.meta.url);
require('reflect-metadata');

export const rootContainer = (require('tsyringe') as typeof Tsyringe).container;
