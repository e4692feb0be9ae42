import pino from 'pino';
import { formatLogLine } from './log-format.js';

export type Logger = pino.Logger;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface LoggerOptions {
  /** Human-readable lines (kernel/log-format.ts) instead of JSON; default: when the output is a terminal. */
  pretty?: boolean;
  /** Where lines go: stdout (a server) or stderr (the `streams` tools, whose stdout may carry data). */
  output?: NodeJS.WriteStream;
}

/**
 * One JSON line per event, or a readable line on a terminal. The boot contract relies on
 * the `url` line being pino JSON wherever a program reads it (a pipe is never a terminal).
 * Child loggers bind `plugin`: a caller never logs a `plugin` key of its own (it would
 * repeat the key; name another plugin `listener_plugin` or `error_plugin`).
 */
export function createLogger(level: LogLevel = 'info', options: LoggerOptions = {}): Logger {
  const output = options.output ?? process.stdout;
  const pretty = options.pretty ?? output.isTTY === true;
  if (!pretty) return pino({ level, base: { pid: process.pid } }, output === process.stdout ? undefined : pino.destination({ fd: (output as { fd?: number }).fd ?? 2, sync: true }));
  const color = output.isTTY === true && process.env.NO_COLOR === undefined;
  return pino({ level, base: { pid: process.pid } }, { write: (line: string) => output.write(formatLogLine(line, { color })) });
}
