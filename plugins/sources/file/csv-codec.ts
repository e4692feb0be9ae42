import type * as CsvParse from 'csv-parse/sync';
import type * as CsvStringify from 'csv-stringify/sync';
import { lazyRequire } from '../../../kernel/index.js';
import type { Entry } from '../contracts.js';

// The CSV libraries (18 modules) load with the first CSV file read or written, as the YAML ones do.
const csvParse = lazyRequire<typeof CsvParse>('csv-parse/sync');
const csvStringify = lazyRequire<typeof CsvStringify>('csv-stringify/sync');

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** A cell holding JSON is decoded (`4`, `true`, `[1,2]`, `"4"`); an empty cell is a missing value. */
function decodeCell(cell: string): unknown {
  if (cell === '') return undefined;
  const first = cell.charCodeAt(0);
  // Only try JSON when the first character can start a JSON value.
  if (/[-0-9"[{tfn]/.test(cell[0]!) || first === 0x20) {
    try {
      return JSON.parse(cell) as unknown;
    } catch {
      return cell;
    }
  }
  return cell;
}

/** Strings are written raw unless reading them back would change them (then JSON-quoted). */
function encodeCell(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value !== '' && decodeCell(value) === value ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

export function decodeCsv(text: string): Entry[] {
  const rows = csvParse().parse(text, { skip_empty_lines: true, relax_column_count: true, bom: true }) as string[][];
  if (rows.length === 0) return [];
  const header = rows[0]!;
  const entries: Entry[] = [];
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r]!;
    const entry: Entry = {};
    header.forEach((column, c) => {
      if (FORBIDDEN.has(column) || column === '') return;
      const value = decodeCell(row[c] ?? '');
      if (value !== undefined) entry[column] = value;
    });
    entries.push(entry);
  }
  return entries;
}

export function encodeCsv(entries: Entry[], keyName: string): string {
  const columns: string[] = [keyName];
  const seen = new Set(columns);
  for (const entry of entries) {
    for (const column of Object.keys(entry)) {
      if (!seen.has(column)) {
        seen.add(column);
        columns.push(column);
      }
    }
  }
  const rows = entries.map((entry) => columns.map((column) => encodeCell(entry[column])));
  return csvStringify().stringify([columns, ...rows]);
}
