import type { Logger } from '../../kernel/index.js';
import type { DefinitionTrouble } from './contracts.js';
import type { StreamDefinition } from './types.js';

/**
 * What the registry does not serve as it is on disk, for `/readyz` and the logs: definitions
 * whose file holds an edit that cannot be used (`degraded`: the last good version is served)
 * and streams not served at all because the parent they extend is missing (`orphans`). Each
 * problem and each definition's unknown-key warnings are logged once, not at every sync.
 */
export class DefinitionTroubles {
  /** By stream id (or file, when no id is known). */
  readonly degraded = new Map<string, DefinitionTrouble>();
  readonly orphans = new Map<string, DefinitionTrouble>();
  /** Unknown keys, logged once per stream and text (a rebuild with the same typo says nothing new). */
  private readonly warned = new Map<string, string>();

  constructor(private readonly logger: Logger) {}

  list(): { degraded: DefinitionTrouble[]; unserved: DefinitionTrouble[] } {
    return { degraded: [...this.degraded.values()], unserved: [...this.orphans.values()] };
  }

  /** Remember (and log once) why a definition file is not served as it is. */
  report(key: string, trouble: DefinitionTrouble): void {
    const known = this.degraded.get(key);
    if (known?.reason === trouble.reason && known.file === trouble.file) return;
    this.degraded.set(key, trouble);
    this.logger.error({ stream: trouble.stream, path: trouble.file }, `definition file not applied: ${trouble.reason}`);
  }

  orphan(id: string, file: string | undefined, parent: string): void {
    const reason = `extends [${parent}], which does not exist: not served until it does`;
    if (this.orphans.get(id)?.reason === reason) return;
    this.orphans.set(id, { stream: id, file, reason });
    this.logger.error({ stream: id, path: file, parent }, `stream [${id}] ${reason}`);
  }

  warnOnce(definition: StreamDefinition): void {
    const text = (definition.warnings ?? []).join('\n');
    if (text === '' || this.warned.get(definition.id) === text) return;
    this.warned.set(definition.id, text);
    for (const warning of definition.warnings!) this.logger.warn({ stream: definition.id, path: definition.file }, warning);
  }
}
