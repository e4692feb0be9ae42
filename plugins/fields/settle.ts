/** `values` as is when none is a promise, else one promise of them all (casts are rarely async). */
export function settle(values: unknown[]): unknown[] | Promise<unknown[]> {
  return values.some((v) => v instanceof Promise) ? Promise.all(values) : values;
}
