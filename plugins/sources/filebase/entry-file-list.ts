import { canonicalInteger } from '../../streams/index.js';
import { sortNames } from './name-order.js';

/** The number of `<integer below 2^32><suffix>` as written (`7.json`, not `07.json`), else -1. */
function integerStem(name: string, suffix: string): number {
  if (!name.endsWith(suffix)) return -1;
  const n = canonicalInteger(name, name.length - suffix.length);
  return n < 2 ** 32 ? n : -1;
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
