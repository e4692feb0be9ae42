import { serviceRef } from '../../kernel/index.js';
import type { Registry } from 'prom-client';

/** The metrics plugin's prom-client registry: an addon adds its own series to it (`context.use(METRICS)`). */
export const METRICS = serviceRef<Registry>('metrics');
