/**
 * PHP `date()` / `DateTime::createFromFormat()` letters, so that `config.format` means
 * what it meant in the PHP system and data it wrote reads back. Only what dates need:
 * no locale (English names), no relative formats.
 */
import { daysInMonth, isLeap, zoneAbbreviation, zoned, type ZonedTime } from './zoned-time.js';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const pad = (n: number, width = 2): string => {
  const text = String(Math.abs(n)).padStart(width, '0');
  return n < 0 ? `-${text}` : text;
};

function offsetText(minutes: number, colon: boolean): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}${colon ? ':' : ''}${pad(abs % 60)}`;
}

function weekday(t: ZonedTime): number {
  return dayOfWeek(t.year, t.month, t.day);
}

function dayOfWeek(year: number, month: number, day: number): number {
  const d = new Date(Date.UTC(2000, month - 1, day));
  d.setUTCFullYear(year);
  return d.getUTCDay();
}

function dayOfYear(t: ZonedTime): number {
  let total = t.day - 1;
  for (let m = 1; m < t.month; m++) total += daysInMonth(t.year, m);
  return total;
}

/** ISO-8601 week number and week-numbering year. */
function isoWeek(t: ZonedTime): { week: number; year: number } {
  const d = new Date(Date.UTC(2000, t.month - 1, t.day));
  d.setUTCFullYear(t.year);
  const dow = d.getUTCDay() || 7;
  d.setUTCDate(d.getUTCDate() + 4 - dow);
  const year = d.getUTCFullYear();
  const start = new Date(Date.UTC(2000, 0, 1));
  start.setUTCFullYear(year);
  return { week: Math.ceil(((d.getTime() - start.getTime()) / 86400000 + 1) / 7), year };
}

function ordinal(day: number): string {
  if (day % 100 >= 11 && day % 100 <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][day % 10] ?? 'th';
}

/** Format a zoned time with PHP date letters (`\` escapes the next character). */
export function formatPhpDate(t: ZonedTime, format: string): string {
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    switch (c) {
      case 'd': out += pad(t.day); break;
      case 'D': out += DAYS[weekday(t)]!.slice(0, 3); break;
      case 'j': out += t.day; break;
      case 'l': out += DAYS[weekday(t)]; break;
      case 'N': out += weekday(t) || 7; break;
      case 'S': out += ordinal(t.day); break;
      case 'w': out += weekday(t); break;
      case 'z': out += dayOfYear(t); break;
      case 'W': out += pad(isoWeek(t).week); break;
      case 'F': out += MONTHS[t.month - 1]; break;
      case 'm': out += pad(t.month); break;
      case 'M': out += MONTHS[t.month - 1]!.slice(0, 3); break;
      case 'n': out += t.month; break;
      case 't': out += daysInMonth(t.year, t.month); break;
      case 'L': out += isLeap(t.year) ? '1' : '0'; break;
      case 'o': out += isoWeek(t).year; break;
      case 'Y': out += pad(t.year, 4); break;
      case 'y': out += pad(((t.year % 100) + 100) % 100); break;
      case 'a': out += t.hour < 12 ? 'am' : 'pm'; break;
      case 'A': out += t.hour < 12 ? 'AM' : 'PM'; break;
      case 'g': out += t.hour % 12 || 12; break;
      case 'G': out += t.hour; break;
      case 'h': out += pad(t.hour % 12 || 12); break;
      case 'H': out += pad(t.hour); break;
      case 'i': out += pad(t.minute); break;
      case 's': out += pad(t.second); break;
      case 'u': out += pad(t.ms * 1000, 6); break;
      case 'v': out += pad(t.ms, 3); break;
      case 'e': out += t.timeZone; break;
      case 'I': out += t.offsetMinutes !== standardOffset(t) ? '1' : '0'; break;
      case 'O': out += offsetText(t.offsetMinutes, false); break;
      case 'P': out += offsetText(t.offsetMinutes, true); break;
      case 'p': out += t.offsetMinutes === 0 ? 'Z' : offsetText(t.offsetMinutes, true); break;
      case 'T': out += zoneAbbreviation(t.epochMs, t.timeZone); break;
      case 'Z': out += t.offsetMinutes * 60; break;
      case 'c': out += formatPhpDate(t, 'Y-m-d\\TH:i:sP'); break;
      case 'r': out += formatPhpDate(t, 'D, d M Y H:i:s O'); break;
      case 'U': out += Math.floor(t.epochMs / 1000); break;
      case '\\': i++; if (i < format.length) out += format[i]; break;
      default: out += c;
    }
  }
  return out;
}

/** The smaller of January's and July's offsets: the zone's standard time (for `I`). */
function standardOffset(t: ZonedTime): number {
  const jan = Date.UTC(t.year, 0, 1);
  const jul = Date.UTC(t.year, 6, 1);
  return Math.min(offsetAt(jan, t.timeZone), offsetAt(jul, t.timeZone));
}

function offsetAt(epochMs: number, timeZone: string): number {
  return zoned(epochMs, timeZone).offsetMinutes;
}

/** What a parse found; unset parts were not in the input. */
export interface ParsedDate {
  year?: number;
  month?: number;
  day?: number;
  hour?: number;
  minute?: number;
  second?: number;
  ms?: number;
  /** An explicit UTC offset in the input (`+02:00`, `Z`). */
  offsetMinutes?: number;
  /** An explicit zone name in the input (`Europe/Paris`). */
  timeZone?: string;
  /** A Unix timestamp in the input (`U`). */
  epochMs?: number;
}

function monthFromName(name: string): number | undefined {
  const lower = name.toLowerCase();
  const index = MONTHS.findIndex((m) => m.toLowerCase() === lower || m.slice(0, 3).toLowerCase() === lower);
  return index < 0 ? undefined : index + 1;
}

function parseOffset(text: string): number | undefined {
  if (text === 'Z' || text === 'z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(text);
  if (!m) return undefined;
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  if (Number(m[2]) > 14 || Number(m[3]) > 59) return undefined;
  return m[1] === '-' ? -minutes : minutes;
}

/** Parse `input` with PHP `createFromFormat` letters; undefined when it does not match. */
export function parsePhpDate(input: string, format: string): ParsedDate | undefined {
  const out: ParsedDate = {};
  let pos = 0;
  let pm: boolean | undefined;
  let hour12: number | undefined;
  const take = (re: RegExp): string | undefined => {
    re.lastIndex = pos;
    const m = re.exec(input);
    if (!m) return undefined;
    pos += m[0].length;
    return m[0];
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    let text: string | undefined;
    switch (c) {
      case 'd': case 'j': text = take(/\d{1,2}/y); if (text === undefined) return undefined; out.day = Number(text); break;
      case 'm': case 'n': text = take(/\d{1,2}/y); if (text === undefined) return undefined; out.month = Number(text); break;
      case 'M': case 'F': {
        text = take(/[A-Za-z]+/y);
        const month = text === undefined ? undefined : monthFromName(text);
        if (month === undefined) return undefined;
        out.month = month;
        break;
      }
      case 'D': case 'l': if (take(/[A-Za-z]+/y) === undefined) return undefined; break;
      case 'Y': text = take(/-?\d{1,4}/y); if (text === undefined) return undefined; out.year = Number(text); break;
      case 'y': {
        text = take(/\d{2}/y);
        if (text === undefined) return undefined;
        const n = Number(text);
        out.year = n < 70 ? 2000 + n : 1900 + n;
        break;
      }
      case 'H': case 'G': text = take(/\d{1,2}/y); if (text === undefined) return undefined; out.hour = Number(text); break;
      case 'h': case 'g': text = take(/\d{1,2}/y); if (text === undefined) return undefined; hour12 = Number(text); break;
      case 'a': case 'A': {
        text = take(/[aApP][mM]/y);
        if (text === undefined) return undefined;
        pm = text.toLowerCase() === 'pm';
        break;
      }
      case 'i': text = take(/\d{2}/y); if (text === undefined) return undefined; out.minute = Number(text); break;
      case 's': text = take(/\d{2}/y); if (text === undefined) return undefined; out.second = Number(text); break;
      case 'u': text = take(/\d{1,9}/y); if (text === undefined) return undefined; out.ms = Math.floor(Number(`0.${text}`) * 1000); break;
      case 'v': text = take(/\d{1,3}/y); if (text === undefined) return undefined; out.ms = Number(text.padEnd(3, '0')); break;
      case 'O': case 'P': case 'p': {
        text = take(/Z|[+-]\d{2}:?\d{2}/y);
        const offset = text === undefined ? undefined : parseOffset(text);
        if (offset === undefined) return undefined;
        out.offsetMinutes = offset;
        break;
      }
      case 'e': case 'T': {
        text = take(/Z|[+-]\d{2}:?\d{2}|[A-Za-z_]+(?:\/[A-Za-z_+-]+)*/y);
        if (text === undefined) return undefined;
        const offset = parseOffset(text);
        if (offset !== undefined) out.offsetMinutes = offset;
        else if (text === 'UTC' || text === 'GMT') out.offsetMinutes = 0;
        else out.timeZone = text;
        break;
      }
      case 'U': text = take(/-?\d+/y); if (text === undefined) return undefined; out.epochMs = Number(text) * 1000; break;
      case '!': case '|': case '+': break;
      case '\\': i++; if (input[pos] !== format[i]) return undefined; pos++; break;
      default:
        if (input[pos] !== c) return undefined;
        pos++;
    }
  }
  if (pos !== input.length) return undefined;
  if (hour12 !== undefined) {
    if (hour12 < 1 || hour12 > 12) return undefined;
    out.hour = (hour12 % 12) + (pm ? 12 : 0);
  } else if (pm !== undefined && out.hour !== undefined && out.hour <= 12) {
    out.hour = (out.hour % 12) + (pm ? 12 : 0);
  }
  return validParts(out) ? out : undefined;
}

function validParts(p: ParsedDate): boolean {
  if (p.month !== undefined && (p.month < 1 || p.month > 12)) return false;
  if (p.day !== undefined) {
    if (p.day < 1) return false;
    const max = p.month !== undefined && p.year !== undefined ? daysInMonth(p.year, p.month) : 31;
    if (p.day > max) return false;
  }
  if (p.hour !== undefined && (p.hour < 0 || p.hour > 23)) return false;
  if (p.minute !== undefined && (p.minute < 0 || p.minute > 59)) return false;
  if (p.second !== undefined && (p.second < 0 || p.second > 59)) return false;
  return true;
}

const ISO = /^(-?\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*([aApP][mM])?$/;

/**
 * Accepted input for the date types: the field's own format first (what the PHP
 * system wrote), then ISO 8601 (`2024-05-01`, `2024-05-01 10:00`, `...T10:00:00+02:00`),
 * then a bare time (`10:30`, `10:30:15`, `3:30 pm`).
 */
export function parseDateInput(input: string, format?: string): ParsedDate | undefined {
  const text = input.trim();
  if (format) {
    const own = parsePhpDate(text, format);
    if (own) return own;
  }
  let m = ISO.exec(text);
  if (m) {
    const out: ParsedDate = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
    if (m[4] !== undefined) {
      out.hour = Number(m[4]);
      out.minute = Number(m[5]);
      out.second = m[6] === undefined ? 0 : Number(m[6]);
      out.ms = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
    }
    if (m[8] !== undefined) {
      const offset = parseOffset(m[8].length === 3 ? `${m[8]}:00` : m[8]);
      if (offset === undefined) return undefined;
      out.offsetMinutes = offset;
    }
    return validParts(out) ? out : undefined;
  }
  m = TIME.exec(text);
  if (m) {
    let hour = Number(m[1]);
    if (m[5] !== undefined) {
      if (hour < 1 || hour > 12) return undefined;
      hour = (hour % 12) + (m[5].toLowerCase() === 'pm' ? 12 : 0);
    }
    const out: ParsedDate = {
      hour,
      minute: Number(m[2]),
      second: m[3] === undefined ? 0 : Number(m[3]),
      ms: m[4] === undefined ? 0 : Math.floor(Number(`0.${m[4]}`) * 1000),
    };
    return validParts(out) ? out : undefined;
  }
  return undefined;
}
