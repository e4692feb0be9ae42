import type { FieldDefinition } from '../../streams/index.js';
import type { FieldType, FieldTypeContext } from '../contracts.js';
import { formatPhpDate, parseDateInput, type ParsedDate } from '../php-date.js';
import { epochOf, isTimeZone, zoned, type WallTime } from '../zoned-time.js';
import { plainDefault, uncastable } from './helpers.js';

type DateKind = 'date' | 'datetime' | 'time';

/** Storage formats when `config.format` is not set (PHP letters). */
export const DEFAULT_FORMATS: Record<DateKind, string> = {
  date: 'Y-m-d',
  datetime: 'Y-m-d\\TH:i:sP',
  time: 'H:i:s',
};

function formatOf(field: FieldDefinition, kind: DateKind): string {
  return typeof field.config.format === 'string' && field.config.format !== '' ? field.config.format : DEFAULT_FORMATS[kind];
}

function zoneOf(field: FieldDefinition, context: FieldTypeContext): string {
  const zone = field.config.timezone;
  return typeof zone === 'string' && isTimeZone(zone) ? zone : context.timezone;
}

function hasDate(p: ParsedDate): boolean {
  return p.epochMs !== undefined || (p.year !== undefined && p.month !== undefined && p.day !== undefined);
}

function hasTime(p: ParsedDate): boolean {
  return p.epochMs !== undefined || p.hour !== undefined;
}

/** The instant a parse names: explicit timestamp, explicit offset or zone, else the field's zone. */
function instantOf(p: ParsedDate, zone: string): number {
  if (p.epochMs !== undefined) return p.epochMs;
  const wall: WallTime = {
    year: p.year ?? 1970, month: p.month ?? 1, day: p.day ?? 1,
    hour: p.hour ?? 0, minute: p.minute ?? 0, second: p.second ?? 0, ms: p.ms ?? 0,
  };
  if (p.offsetMinutes !== undefined) return epochOf(wall, 'UTC') - p.offsetMinutes * 60000;
  return epochOf(wall, p.timeZone && isTimeZone(p.timeZone) ? p.timeZone : zone);
}

/** A parse pinned to an instant (offset, zone or timestamp given) is read in the field's zone. */
function pinned(p: ParsedDate): boolean {
  return p.epochMs !== undefined || p.offsetMinutes !== undefined || p.timeZone !== undefined;
}

function accept(kind: DateKind, p: ParsedDate | undefined): boolean {
  if (!p) return false;
  if (kind === 'time') return hasTime(p);
  return hasDate(p);
}

/** Input (a parse of it) to the stored text in the field's format and zone. */
function store(kind: DateKind, p: ParsedDate, field: FieldDefinition, context: FieldTypeContext): string {
  const zone = zoneOf(field, context);
  const format = formatOf(field, kind);
  if (kind === 'datetime' || pinned(p)) {
    const at = zoned(instantOf(p, zone), zone);
    if (kind === 'date') return formatPhpDate(zoned(epochOf({ ...at, hour: 0, minute: 0, second: 0, ms: 0 }, zone), zone), format);
    if (kind === 'time') return formatPhpDate(at, format);
    return formatPhpDate(at, format);
  }
  // A wall date or time with no zone of its own names that wall time in the field's zone.
  const wall: WallTime =
    kind === 'date'
      ? { year: p.year!, month: p.month!, day: p.day!, hour: 0, minute: 0, second: 0, ms: 0 }
      : { year: 1970, month: 1, day: 1, hour: p.hour ?? 0, minute: p.minute ?? 0, second: p.second ?? 0, ms: p.ms ?? 0 };
  return formatPhpDate(zoned(epochOf(wall, zone), zone), format);
}

function nowText(kind: DateKind, field: FieldDefinition, context: FieldTypeContext): string {
  const zone = zoneOf(field, context);
  return formatPhpDate(zoned(Date.now(), zone), formatOf(field, kind));
}

const MESSAGES: Record<DateKind, string> = {
  date: 'The :attribute field must be a valid date.',
  datetime: 'The :attribute field must be a valid date.',
  time: 'The :attribute field must be a valid time.',
};

function dateType(name: string, kind: DateKind): FieldType {
  const parse = (value: unknown, field: FieldDefinition): ParsedDate | undefined =>
    typeof value === 'string' ? parseDateInput(value, formatOf(field, kind)) : undefined;
  return {
    name,
    rule: kind === 'time' ? 'date_format' : 'date',
    message: MESSAGES[kind],
    configKeys: ['format', 'timezone'],
    schema(field, context) {
      return { type: 'string', ...context.toolkit.predicate((value) => accept(kind, parse(value, field))) };
    },
    normalize: (value) => (typeof value === 'string' && value.trim() === '' ? null : value),
    cast(value, field, context) {
      const p = parse(value, field);
      return p && accept(kind, p) ? store(kind, p, field, context) : value;
    },
    defaultValue(field, context) {
      const fallback = field.config.default;
      if (fallback === 'now' || (kind === 'date' && fallback === 'today')) return nowText(kind, field, context);
      return plainDefault(fallback);
    },
    castFilter(value, field, context) {
      const p = typeof value === 'string' ? parseDateInput(value, formatOf(field, kind)) : undefined;
      if (!p || !accept(kind, p)) throw uncastable(field, value, kind === 'time' ? 'a time' : 'a date');
      return store(kind, p, field, context);
    },
    check(field) {
      const problems: string[] = [];
      const { format, timezone } = field.config;
      if (format !== undefined && (typeof format !== 'string' || format === '')) problems.push(`Field [${field.handle}]: config.format must be a PHP date format string.`);
      if (timezone !== undefined && (typeof timezone !== 'string' || !isTimeZone(timezone))) {
        problems.push(`Field [${field.handle}]: config.timezone [${String(timezone)}] is not a known time zone.`);
      }
      return problems;
    },
  };
}

export const dateOnlyType = dateType('date', 'date');
export const datetimeType = dateType('datetime', 'datetime');
export const timeType = dateType('time', 'time');
