import { serviceRef } from '../../kernel/index.js';
import type { StreamSink } from '../http/index.js';
import type { Admission } from './admission.js';
import type { ClusterChanges } from './cluster-changes.js';
import type { SharedOutbox } from './shared-outbox.js';
import type { ChangeFeed } from './feed.js';
import type { HistoryLoad } from './history-load.js';
import type { RealtimeSession } from './socket-session.js';
import type { Webhooks } from './webhooks.js';

/** The realtime plugin's state: `context.use(REALTIME)` (tests, addons that follow the feed). */
export interface Realtime {
  feed: ChangeFeed;
  webhooks: Webhooks;
  /** Open Server-Sent Event streams (ended at shutdown). */
  open: Set<StreamSink>;
  /** Open WebSocket sessions (closed at shutdown). */
  sessions: Set<RealtimeSession>;
  /** Who holds which long-lived slots (event streams, sockets, subscriptions). */
  admission: Admission;
  /** Webhooks of `database` streams: one outbox shared by the cluster's nodes. */
  outbox: SharedOutbox;
  /** The feed of `database` streams from their change streams (with the mongodb plugin). */
  cluster?: ClusterChanges;
  stopFollowing?: () => void;
  /** The boot's read of the history and the outbox, after listening: `await history.start()` before using the feed at boot. */
  history: HistoryLoad;
}

export const REALTIME = serviceRef<Realtime>('realtime');
