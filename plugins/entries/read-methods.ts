import type { DependencyContainer } from 'tsyringe';
import type { CriteriaReadMethod, EntriesService } from './contracts.js';
import { ENTRIES } from './tokens.js';

/**
 * For addons: add a read method to the query endpoint, e.g. in `boot`:
 * `registerReadMethod(container, 'recent', (c, [n]) => c.orderBy('year', 'desc').limit(n))`.
 */
export function registerReadMethod(container: DependencyContainer, name: string, method: CriteriaReadMethod): void {
  container.resolve<EntriesService>(ENTRIES).registerReadMethod(name, method);
}
