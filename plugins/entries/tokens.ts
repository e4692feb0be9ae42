import { serviceRef } from '../../kernel/index.js';
import type { EntriesService } from './contracts.js';

/** The entries service: `context.use(ENTRIES)`. */
export const ENTRIES = serviceRef<EntriesService>('entries');
