import { serviceRef } from '../../kernel/index.js';
import type { FieldsService } from './contracts.js';

/** The fields service (types, rules, validation): `context.use(FIELDS)`. */
export const FIELDS = serviceRef<FieldsService>('fields');
