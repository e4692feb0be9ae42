import pino from 'pino';
import type { Logger } from '../../kernel/index.js';

/** A pino logger whose JSON lines are kept for assertions (one object per line). */
export function memoryLogger(level = 'info'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }) as unknown as Logger;
  return { logger, lines };
}
