import { canonicalInteger } from '../../streams/index.js';

/**
 * Entry files in key order when their names are plain integers (`1.json`... `100000.json`),
 * so the loaded entries need no sort by key (about 2 s blocking at 1M); any other names sort
 * as text, as before. Integers below 2^32 and indexes below 2^21 pack into one float each,
 * sorted natively.
 */
export function sortNames(names: string[]): void {
  if (names.length < 2 ** 21) {
    const packed = new Float64Array(names.length);
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const n = canonicalInteger(name, name.indexOf('.'));
      if (n < 0 || n >= 2 ** 32) {
        names.sort();
        return;
      }
      packed[i] = n * 2 ** 21 + i;
    }
    packed.sort();
    // Two files of one number (`1.json`, `1.md`): text order, as before, decides which is kept.
    for (let i = 1; i < packed.length; i++) {
      if (Math.floor(packed[i]! / 2 ** 21) === Math.floor(packed[i - 1]! / 2 ** 21)) {
        names.sort();
        return;
      }
    }
    // Move each name to its place in place, one cycle of the permutation at a time (a copy of
    // the names was 8 MB more at 1M files); a visited slot is marked -1.
    for (let start = 0; start < packed.length; start++) {
      if (packed[start]! < 0) continue;
      const first = names[start]!;
      let at = start;
      for (;;) {
        const from = packed[at]! % 2 ** 21;
        packed[at] = -1;
        if (from === start) {
          names[at] = first;
          break;
        }
        names[at] = names[from]!;
        at = from;
      }
    }
    return;
  }
  names.sort();
}
