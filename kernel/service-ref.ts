/**
 * Typed service references, in the spirit of Backstage's `createServiceRef<T>`: a plugin
 * exports `export const ENTRIES = serviceRef<EntriesService>('entries')`, provides it with
 * `context.provide(ENTRIES, impl)` and others get it with `context.use(ENTRIES)`, typed by
 * the compiler. No `container.resolve<T>(token)` whose `T` nobody checks.
 *
 * At run time a reference is the registered symbol `streams-kernel:<id>`, the tsyringe
 * token it always was, so code written against `container.resolve(TOKEN)` (addons that
 * predate references) keeps working. tsyringe stays underneath as the per-kernel store
 * (one child container per kernel); docs/decisions.md, "Kernel contracts", says why.
 */
declare const SERVICE_TYPE: unique symbol;

/** A reference to a service of type `T`; the type lives only in the compiler. */
export type ServiceRef<T> = symbol & { readonly [SERVICE_TYPE]?: T };

/** The type a reference stands for: `ServiceOf<typeof ENTRIES>` is `EntriesService`. */
export type ServiceOf<R> = R extends ServiceRef<infer T> ? T : never;

const PREFIX = 'streams-kernel:';

export function serviceRef<T>(id: string): ServiceRef<T> {
  return Symbol.for(PREFIX + id) as ServiceRef<T>;
}

/** The id a reference was made with (for messages). */
export function serviceId(ref: symbol): string {
  const description = ref.description ?? String(ref);
  return description.startsWith(PREFIX) ? description.slice(PREFIX.length) : description;
}
