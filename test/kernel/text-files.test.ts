import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeText, readTextFile, readTextFileSync, UnreadableTextError } from '../../kernel/index.js';

/** The synchronous reader filebase loads with (issue #16) reads what the async one reads. */
describe('readTextFileSync', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'text-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('strips a byte order mark, keeps multi-byte characters, and reads files larger than its buffer whole', async () => {
    const cases: Record<string, string> = {
      bom: '\ufeff{"id": 1, "name": "café"}',
      empty: '',
      // 64 KiB exactly and beyond, with a multi-byte character across the buffer's end.
      exact: 'x'.repeat(64 * 1024),
      large: `${'a'.repeat(64 * 1024 - 1)}é${'b'.repeat(70_000)}`,
    };
    for (const [name, text] of Object.entries(cases)) {
      const file = path.join(dir, `${name}.json`);
      writeFileSync(file, text);
      expect(readTextFileSync(file), name).toBe(await readTextFile(file));
      expect(readTextFileSync(file).startsWith('\ufeff'), name).toBe(false);
    }
    expect(readTextFileSync(path.join(dir, 'large.json')).length).toBe(64 * 1024 - 1 + 1 + 70_000);
    expect(() => readTextFileSync(path.join(dir, 'missing.json'))).toThrow(/ENOENT/);
  });
});

/** decodeText: a range of a Buffer (how the boot's reads decode) or of any Uint8Array, alike. */
describe('decodeText', () => {
  it('decodes the range asked for, without its byte order mark, from a Buffer or a plain Uint8Array', () => {
    const text = '\ufeff{"name": "Straße Привет 🌍"}';
    const bytes = Buffer.concat([Buffer.from('junk'), Buffer.from(text), Buffer.from('tail')]);
    const start = 4;
    const end = 4 + Buffer.byteLength(text);
    expect(decodeText(bytes, start, end)).toBe(text.slice(1));
    expect(decodeText(new Uint8Array(bytes), start, end)).toBe(text.slice(1));
    expect(decodeText(Buffer.from(text))).toBe(text.slice(1));
  });

  it('refuses bytes that are not UTF-8 in the range, and ignores them outside it', () => {
    const bytes = Buffer.from([0x7b, 0x7d, 0xff, 0xfe]);
    expect(() => decodeText(bytes, 0, 4)).toThrow(UnreadableTextError);
    expect(decodeText(bytes, 0, 2)).toBe('{}');
    // Invalid forms a lenient decoder might let through: overlong, a surrogate, a cut sequence, a stray continuation.
    for (const bad of [[0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x61, 0xe2, 0x82], [0x80], [0xf4, 0x90, 0x80, 0x80]]) {
      expect(() => decodeText(Buffer.from(bad)), bad.join(' ')).toThrow(UnreadableTextError);
      expect(() => decodeText(new Uint8Array([0x20, ...bad, 0x20]), 1, bad.length + 1), bad.join(' ')).toThrow(UnreadableTextError);
    }
  });

  it('keeps a U+FFFD the file really holds (the decoder makes one for invalid bytes too: those alone are refused)', () => {
    const text = '{"note": "\ufffd is the replacement character", "more": "é\ufffd"}';
    expect(decodeText(Buffer.from(text))).toBe(text);
    expect(decodeText(new Uint8Array(Buffer.from(`x${text}`)), 1)).toBe(text);
    expect(() => decodeText(Buffer.concat([Buffer.from(text), Buffer.from([0xff])]))).toThrow(UnreadableTextError);
  });
});
