/**
 * Tokens the kernel binds for every plugin. Plugins define their own tokens in their
 * own index.ts; these are the only ones the kernel itself owns.
 */
export const CONFIG = Symbol.for('streams-kernel:config');
export const LOGGER = Symbol.for('streams-kernel:logger');
export const HOOKS = Symbol.for('streams-kernel:hooks');
export const APP_ROOT = Symbol.for('streams-kernel:app-root');
export const KERNEL = Symbol.for('streams-kernel:kernel');
