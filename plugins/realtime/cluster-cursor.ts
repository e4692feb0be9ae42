/**
 * Cursors of `database` streams (issue #29 item 6): derived from the change itself, so every
 * node of a cluster hands out the same cursor for the same change and any node can resume a
 * client from it. A cluster cursor is 20 hex digits: the change's cluster time (seconds, 8
 * digits; increment, 8 digits) and its ordinal among the collection's changes at that same
 * cluster time (4 digits: a transaction's changes share one). Fixed width, so cursors of a
 * stream compare as strings in the order of the replica set's history. Per-node cursors
 * (`<run>-<seq>`, every other stream) never match this form.
 */
export const CLUSTER_CURSOR = /^[0-9a-f]{20}$/;

/** A cluster time as the driver's `Timestamp` carries it (`high`: seconds, `low`: increment). */
export interface ClusterTime {
  high: number;
  low: number;
}

export function clusterCursor(time: ClusterTime, ordinal: number): string {
  return `${hex(time.high, 8)}${hex(time.low, 8)}${hex(Math.min(ordinal, 0xffff), 4)}`;
}

/** The cluster time a cluster cursor names (the ordinal dropped). */
export function timeOfCursor(cursor: string): ClusterTime {
  return { high: parseInt(cursor.slice(0, 8), 16), low: parseInt(cursor.slice(8, 16), 16) };
}

export function isClusterCursor(cursor: string): boolean {
  return CLUSTER_CURSOR.test(cursor);
}

function hex(value: number, digits: number): string {
  return (value >>> 0).toString(16).padStart(digits, '0');
}
