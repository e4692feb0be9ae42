/**
 * Wall-clock time in an IANA time zone through Intl (no dependency): the date types
 * need "what does this instant read in Europe/Paris" and the reverse.
 */

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
}

export interface ZonedTime extends WallTime {
  /** Minutes east of UTC at that instant. */
  offsetMinutes: number;
  epochMs: number;
  timeZone: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** True when Intl knows the zone (`Europe/Paris`, `UTC`). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Date.UTC without its 0..99 -> 1900s surprise. */
export function utcMs(wall: WallTime): number {
  const date = new Date(Date.UTC(2000, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second, wall.ms));
  date.setUTCFullYear(wall.year);
  return date.getTime();
}

export function zoned(epochMs: number, timeZone: string): ZonedTime {
  const ms = ((epochMs % 1000) + 1000) % 1000;
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') {
    const d = new Date(epochMs);
    return {
      year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(),
      hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds(), ms,
      offsetMinutes: 0, epochMs, timeZone,
    };
  }
  const wall: WallTime = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0, ms };
  let bc = false;
  for (const part of formatter(timeZone).formatToParts(new Date(epochMs))) {
    switch (part.type) {
      case 'year': wall.year = Number(part.value); break;
      case 'month': wall.month = Number(part.value); break;
      case 'day': wall.day = Number(part.value); break;
      case 'hour': wall.hour = Number(part.value); break;
      case 'minute': wall.minute = Number(part.value); break;
      case 'second': wall.second = Number(part.value); break;
      case 'era': bc = part.value.startsWith('B'); break;
    }
  }
  if (bc) wall.year = 1 - wall.year;
  const offsetMinutes = Math.round((utcMs(wall) - epochMs) / 60000);
  return { ...wall, offsetMinutes, epochMs, timeZone };
}

/** The instant a wall-clock time names in `timeZone` (the later reading in a DST gap). */
export function epochOf(wall: WallTime, timeZone: string): number {
  const asUtc = utcMs(wall);
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return asUtc;
  const first = zoned(asUtc, timeZone).offsetMinutes;
  let epoch = asUtc - first * 60000;
  const second = zoned(epoch, timeZone).offsetMinutes;
  if (second !== first) epoch = asUtc - second * 60000;
  return epoch;
}

const abbreviations = new Map<string, Intl.DateTimeFormat>();

/** Short zone name for PHP's `T` (`UTC`, `EST`, `GMT+1`). */
export function zoneAbbreviation(epochMs: number, timeZone: string): string {
  let format = abbreviations.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' });
    abbreviations.set(timeZone, format);
  }
  return format.formatToParts(new Date(epochMs)).find((p) => p.type === 'timeZoneName')?.value ?? timeZone;
}

export function daysInMonth(year: number, month: number): number {
  return [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

export function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
