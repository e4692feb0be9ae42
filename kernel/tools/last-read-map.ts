/**
 * A Map that answers a read of the key it was last read with without looking it up again.
 * For the few maps every request reads with the same key (a GET reads its stream's
 * definition twice, once by the route's parameter and once by the definition's own id): each
 * lookup hashes and compares the key in a builtin call, a comparison of the key with the last
 * one costs a few instructions. Any write forgets the last read, so a read never answers what
 * the map no longer holds.
 */
export class LastReadMap<K, V> extends Map<K, V> {
  private lastKey: K | undefined;
  private lastValue: V | undefined;

  override get(key: K): V | undefined {
    if (key === this.lastKey && this.lastValue !== undefined) return this.lastValue;
    const value = super.get(key);
    this.lastKey = key;
    this.lastValue = value;
    return value;
  }

  override set(key: K, value: V): this {
    this.forget();
    return super.set(key, value);
  }

  override delete(key: K): boolean {
    this.forget();
    return super.delete(key);
  }

  override clear(): void {
    this.forget();
    super.clear();
  }

  private forget(): void {
    this.lastKey = undefined;
    this.lastValue = undefined;
  }
}
