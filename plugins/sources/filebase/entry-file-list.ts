import { canonicalInteger } from '../../streams/index.js';
import { sortNames } from './name-order.js';

/** The number of `<integer below 2^32><suffix>` as written (`7.json`, not `07.json`), else -1. */
function integerStem(name: string, suffix: string): number {
  if (!name.endsWith(suffix)) return -1;
  const n = canonicalInteger(name, name.length - suffix.length);
  return n < 2 ** 32 ? n : -1;
}

/** Lists of integer names from this long are sorted in steps (`sortYielding`); below, the native sort takes under ~20 ms. */
export const SLICED_SORT_FROM = 200_000;
/** Numbers handled per step of the radix sort: 1M numbers took 88-98 ms in 128 steps, the longest ~13 ms. */
const RADIX_STEP = 32_768;

/**
 * `numbers` sorted ascending, in place (through a scratch array as long, returned for
 * convenience): a least-significant-digit radix sort on two 16-bit halves, each pass counting
 * then placing, `pause` awaited every `RADIX_STEP` numbers.
 */
export async function radixSorted(numbers: Uint32Array<ArrayBuffer>, pause: () => Promise<void>): Promise<Uint32Array<ArrayBuffer>> {
  let from = numbers;
  let to = new Uint32Array(numbers.length);
  for (const shift of [0, 16]) {
    // starts[d + 1] counts digit d; after the prefix sums, starts[d] is where digit d goes next.
    const starts = new Uint32Array(65_537);
    for (let begin = 0; begin < from.length; begin += RADIX_STEP) {
      countDigits(from, starts, shift, begin, Math.min(from.length, begin + RADIX_STEP));
      await pause();
    }
    prefixSums(starts);
    for (let begin = 0; begin < from.length; begin += RADIX_STEP) {
      placeDigits(from, to, starts, shift, begin, Math.min(from.length, begin + RADIX_STEP));
      await pause();
    }
    [from, to] = [to, from];
  }
  return from;
}

// The loops of each step are functions of their own: a loop inside an async function resumes
// unoptimized after each await (as `readSlice` in parallel-read.ts); inline, the first steps of
// each pass took 7-28 ms.
function countDigits(from: Uint32Array, starts: Uint32Array, shift: number, begin: number, end: number): void {
  for (let i = begin; i < end; i++) starts[((from[i]! >>> shift) & 0xffff) + 1]!++;
}

function prefixSums(starts: Uint32Array): void {
  for (let d = 1; d < starts.length; d++) starts[d]! += starts[d - 1]!;
}

function placeDigits(from: Uint32Array, to: Uint32Array, starts: Uint32Array, shift: number, begin: number, end: number): void {
  for (let i = begin; i < end; i++) {
    const value = from[i]!;
    to[starts[(value >>> shift) & 0xffff]!++] = value;
  }
}

/**
 * The entry files of a filebase folder, in the order they are read (sortNames: integer names
 * numerically, else as text). While every name is `<integer>.<first extension>`, the names
 * are kept as numbers in a typed array and spelled again when read: at 1M files the names
 * as strings were about 40 MB, still in the heap when the first entry is served.
 */
export class EntryFileList {
  private numbers = new Uint32Array(1024);
  private count = 0;
  /** Every name as text, once one is not an integer with the first extension. */
  private names: string[] | undefined;
  private readonly suffix: string;

  constructor(private readonly extension: string) {
    this.suffix = `.${extension}`;
  }

  add(name: string): void {
    if (this.names !== undefined) {
      this.names.push(name);
      return;
    }
    const n = integerStem(name, this.suffix);
    if (n < 0) {
      this.names = this.spelled();
      this.names.push(name);
      return;
    }
    if (this.count === this.numbers.length) {
      const grown = new Uint32Array(this.count * 2);
      grown.set(this.numbers);
      this.numbers = grown;
    }
    this.numbers[this.count++] = n;
  }

  /** Put the names in read order (once every name is added). */
  sort(): void {
    if (this.names !== undefined) sortNames(this.names);
    else this.numbers = this.numbers.subarray(0, this.count).sort();
  }

  /**
   * `sort`, awaiting `pause` between steps of a long list of integer names: the native sort of
   * 1M numbers held the event loop ~95 ms at boot (/healthz waited for it), a radix sort in
   * steps of `RADIX_STEP` numbers holds it at most ~13 ms at a time, mostly under 1 ms.
   */
  async sortYielding(pause: () => Promise<void>): Promise<void> {
    if (this.names !== undefined || this.count < SLICED_SORT_FROM) return this.sort();
    this.numbers = await radixSorted(this.numbers.subarray(0, this.count), pause);
  }

  get length(): number {
    return this.names?.length ?? this.count;
  }

  nameAt(index: number): string {
    return this.names !== undefined ? this.names[index]! : `${this.numbers[index]!}${this.suffix}`;
  }

  /** The integer a name spells (`7` for `7.json`) while every name is one, else -1: compared without spelling the name. */
  integerAt(index: number): number {
    return this.names !== undefined ? -1 : this.numbers[index]!;
  }

  private spelled(): string[] {
    const names = new Array<string>(this.count);
    for (let i = 0; i < this.count; i++) names[i] = `${this.numbers[i]!}${this.suffix}`;
    this.numbers = new Uint32Array(0);
    this.count = 0;
    return names;
  }
}
