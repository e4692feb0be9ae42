/**
 * Errors that cross layers carry a status so the HTTP layer can answer without
 * knowing which layer threw. The kernel itself knows nothing of HTTP: a status is
 * just a number attached to an error.
 */

/** One element of an envelope's `errors` array (decisions.md: "Error element shape"). */
export interface ErrorElement {
  message: string;
  meta?: { field?: string; rule?: string; [key: string]: unknown };
}

/**
 * A brand instead of prototype identity: an addon may bring its own copy of this module
 * (a nested node_modules), and its errors must still be recognised as AppErrors.
 */
const BRAND = Symbol.for('streams-kernel:app-error');

function isBranded(value: unknown): value is AppError {
  return value instanceof Error && (value as unknown as Record<symbol, unknown>)[BRAND] === true;
}

export class AppError extends Error {
  readonly status: number;
  readonly errors: ErrorElement[];
  /** Extra response headers for this answer (e.g. `Retry-After` on a 503). */
  headers?: Array<[string, string]>;

  /** `x instanceof AppError` (or a subclass) holds across copies of this module. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    return isBranded(value) && (this === AppError || value.name === this.name);
  }

  constructor(status: number, message: string, errors?: ErrorElement[]) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.errors = errors && errors.length > 0 ? errors : [{ message }];
  }
}

/** 400: the request itself is malformed (bad JSON, bad parameter, bad key). */
export class BadRequestError extends AppError {
  constructor(message: string, meta?: ErrorElement['meta']) {
    super(400, message, [meta ? { message, meta } : { message }]);
    this.name = 'BadRequestError';
  }
}

/** 404: an unknown stream or entry. */
export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, message);
    this.name = 'NotFoundError';
  }
}

/** 409: validation failed; one element per failed rule. */
export class ValidationError extends AppError {
  constructor(errors: ErrorElement[]) {
    super(409, errors[0]?.message ?? 'The given data was invalid.', errors);
    this.name = 'ValidationError';
  }
}

/**
 * A configuration or definition problem found at boot. `file` and `path` (a JSON
 * pointer-ish path such as `/fields/2/type`) name exactly where, so an operator can fix it.
 */
export class ConfigError extends Error {
  readonly file?: string;
  readonly path?: string;
  /** The problem without its place (`streams check` prints file, path and problem apart). */
  readonly problem: string;

  constructor(message: string, file?: string, path?: string) {
    const where = [file, path ? `at ${path}` : undefined].filter(Boolean).join(' ');
    super(where ? `${where}: ${message}` : message);
    this.name = 'ConfigError';
    this.file = file;
    this.path = path;
    this.problem = message;
  }
}

/** A plugin's lifecycle step, or its listener of one of the kernel's lifecycle hooks. */
export type PluginStep = 'register' | 'boot' | 'ready' | 'drain' | 'shutdown' | 'kernel.booted' | 'kernel.shutdown';

/**
 * A plugin whose lifecycle step (register, boot, ready, drain, shutdown, or its listener of
 * `kernel.booted`/`kernel.shutdown`) did not settle in time: the message names the plugin,
 * the step and the setting that gives it longer.
 */
export class PluginTimeoutError extends Error {
  constructor(
    readonly plugin: string,
    readonly step: PluginStep,
    readonly ms: number,
  ) {
    const setting = step === 'shutdown' || step === 'drain' || step === 'kernel.shutdown' ? 'shutdown_timeout_ms' : 'boot_timeout_ms';
    const what = step.startsWith('kernel.') ? `"${step}" listener` : step;
    super(`plugin "${plugin}" did not finish its ${what} within ${ms} ms (give it longer with "${setting}" in its "plugins" entry)`);
    this.name = 'PluginTimeoutError';
  }
}

/** The plugin whose hook listener threw `error` (set by the plugin's view of the hook bus). */
const PLUGIN_OF_ERROR = Symbol.for('streams-kernel:error-plugin');

export function tagErrorWithPlugin(error: unknown, plugin: string): unknown {
  if (error !== null && typeof error === 'object' && !(PLUGIN_OF_ERROR in error)) {
    Object.defineProperty(error, PLUGIN_OF_ERROR, { value: plugin, configurable: true });
  }
  return error;
}

/** For log lines: which plugin's listener an error came from (undefined: not a listener's). */
export function pluginOfError(error: unknown): string | undefined {
  return error !== null && typeof error === 'object' ? ((error as Record<symbol, unknown>)[PLUGIN_OF_ERROR] as string | undefined) : undefined;
}

(AppError.prototype as unknown as Record<symbol, boolean>)[BRAND] = true;

export function isAppError(error: unknown): error is AppError {
  return isBranded(error);
}
