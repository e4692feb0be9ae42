import type { EntriesService, ReadScope } from '../entries/index.js';
import type { StreamDefinition } from '../streams/index.js';
import type { Change, ChangeFilter } from './feed.js';

/**
 * A subscription under access rules (issue #28): the subscriber's `list` scope decides what
 * of each change it gets. A change of an entry it cannot see is skipped; an update that
 * moves an entry out of its view comes as `deleted` (no data), one that moves it into its
 * view as `created`; hidden fields are left out of the data. A change too large to keep its
 * attributes (omitted) cannot be checked and is skipped. The filter key names the scope, so
 * subscribers under the same resolved rules share one check per change, and only they do.
 */
export function accessView(base: ChangeFilter, scope: ReadScope, definition: StreamDefinition, entries: EntriesService): ChangeFilter {
  const sees = (attributes: Record<string, unknown> | null | undefined): boolean => attributes != null && entries.satisfies(definition, scope.where, attributes);
  // One view per change for this filter: the live feed asks once per group, replays once per change read.
  const views = new WeakMap<Change, Change | null>();
  const viewOf = (change: Change): Change | undefined => {
    if (change.match === null || !base.accepts(change)) return undefined;
    const now = sees(change.match);
    if (change.event !== 'updated') return now ? narrowed(change, change.event, scope.hidden) : undefined;
    // Without the version before (a history line of an older run), what the subscriber saw is unknown: an update.
    const was = change.before === undefined ? now : sees(change.before);
    if (was && now) return narrowed(change, 'updated', scope.hidden);
    if (was) return { ...change, event: 'deleted', data: 'null', wire: undefined };
    if (now) return narrowed(change, 'created', scope.hidden);
    return undefined;
  };
  return {
    key: `${scope.key}\u0000${base.key}`,
    accepts: (change) => viewOf(change) !== undefined,
    view(change) {
      const kept = views.get(change);
      if (kept !== undefined) return kept ?? undefined;
      const seen = viewOf(change);
      views.set(change, seen ?? null);
      return seen;
    },
  };
}

/** The change with another event and/or without the hidden fields (a copy: the original's wire forms are everyone's). */
function narrowed(change: Change, event: Change['event'], hidden: ReadonlySet<string>): Change {
  if (event === change.event && (hidden.size === 0 || change.data === 'null')) return change;
  let data = change.data;
  if (hidden.size > 0 && data !== 'null') {
    const shown = JSON.parse(data) as Record<string, unknown>;
    for (const name of hidden) delete shown[name];
    data = JSON.stringify(shown);
  }
  const { wire: _wire, ...rest } = change;
  return { ...rest, event, data };
}
