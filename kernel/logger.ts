import pino from 'pino';

export type Logger = pino.Logger;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** One JSON line per event on stdout; the boot contract relies on the `url` line being pino JSON. */
export function createLogger(level: LogLevel = 'info'): Logger {
  return pino({ level, base: { pid: process.pid } });
}
