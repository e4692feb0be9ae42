import type { EndpointName } from '../contracts.js';
import type { EndpointContext, EndpointHandler } from './context.js';
import { deleteEntry } from './entries/delete.js';
import { listEntries } from './entries/list.js';
import { queryEntries } from './entries/query.js';
import { showEntry } from './entries/show.js';
import { storeEntry } from './entries/store.js';
import { writeEntry } from './entries/write.js';
import { EntryReplies } from './entry-replies.js';

/**
 * The entry endpoints and the query endpoint: one small handler per endpoint (entries/*.ts),
 * sharing the envelope, links, reply cache and error answers of EntryReplies. Each handler is
 * guarded: an AppError it throws answers addressed like its success would be (a write's
 * with its masked payload).
 */
export function entryEndpoints(context: EndpointContext): Record<Extract<EndpointName, `entries.${string}`>, EndpointHandler> {
  const replies = new EntryReplies(context);
  return {
    'entries.index': replies.guarded(listEntries(replies)),
    'entries.show': replies.guarded(showEntry(replies)),
    'entries.store': replies.guarded(storeEntry(replies), true),
    'entries.update': replies.guarded(writeEntry(replies, 'replace'), true),
    'entries.patch': replies.guarded(writeEntry(replies, 'patch'), true),
    'entries.delete': replies.guarded(deleteEntry(replies)),
    'entries.query': replies.guarded(queryEntries(replies)),
  };
}
