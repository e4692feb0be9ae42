/**
 * Public surface of the realtime plugin: the change feed of every stream, served as
 * Server-Sent Events, WebSocket subscriptions and signed webhooks (docs/realtime.md).
 */
export type { Change, ChangeEvent, ChangeListener, FeedLimits } from './feed.js';
export type { ChangeFeed } from './feed.js';
export type { StreamWebhook, WebhookConfig } from './webhooks.js';
export { signature } from './webhooks.js';
export { REALTIME, type Realtime } from './tokens.js';
export { realtimePlugin as default } from './plugin.js';
export { realtimeSettings, type RealtimeSettings } from './settings.js';
