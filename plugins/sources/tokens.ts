import { serviceRef } from '../../kernel/index.js';
import type { SourceRegistry } from './contracts.js';

/** The source registry (source types, cache stores, open sources): `context.use(SOURCES)`. */
export const SOURCES = serviceRef<SourceRegistry>('sources');
