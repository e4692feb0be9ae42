/**
 * The human-readable form of a pino JSON line (a terminal, or `--pretty`): time, level,
 * `[plugin]`, the message, then the other keys as `key=value`. Errors show their stack
 * below the line. The `listening` line becomes the boot banner: the URL, the transport and
 * the links plugins announced (the reference page, a control panel). A few dozen lines
 * instead of pino-pretty and its dependencies: the JSON form stays the contract.
 */
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const COLORS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };
/** Keys every line has, shown in the line's head or not at all. */
const HEAD_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'plugin', 'err', 'v']);

export interface FormatOptions {
  color: boolean;
}

export function formatLogLine(line: string, options: FormatOptions): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof record.level === 'number' ? record.level : 30;
  const paint = (code: string, text: string): string => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  if (record.msg === 'listening' && typeof record.url === 'string') return banner(record, paint);
  const time = typeof record.time === 'number' ? new Date(record.time).toISOString().slice(11, 23) : '';
  const plugin = typeof record.plugin === 'string' ? ` ${paint('90', `[${record.plugin}]`)}` : '';
  const rest = Object.entries(record)
    .filter(([key]) => !HEAD_KEYS.has(key))
    .map(([key, value]) => `${paint('90', `${key}=`)}${show(value)}`)
    .join(' ');
  let text = `${paint('90', time)} ${paint(COLORS[level] ?? '0', LEVELS[level] ?? String(level))}${plugin} ${String(record.msg ?? '')}${rest ? ` ${rest}` : ''}\n`;
  const err = record.err as { message?: string; stack?: string } | undefined;
  if (err !== undefined && err !== null) text += `${indent(err.stack ?? err.message ?? show(err))}\n`;
  return text;
}

/** The one short boot banner. */
function banner(record: Record<string, unknown>, paint: (code: string, text: string) => string): string {
  const lines = [`${paint('1', 'Streams Kernel')} listening on ${paint('36', String(record.url))} (${String(record.transport ?? 'unknown transport')})`];
  const links = record.links as Record<string, string> | undefined;
  for (const [name, url] of Object.entries(links ?? {})) lines.push(`  ${name.padEnd(8)} ${url}`);
  return `${lines.join('\n')}\n`;
}

function show(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
