import { serviceRef } from '../../kernel/index.js';
import type { StreamSink } from '../http/index.js';
import type { Admission } from './admission.js';
import type { ChangeFeed } from './feed.js';
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
}

export const REALTIME = serviceRef<Realtime>('realtime');
