import path from 'node:path';
import type { DefinitionProblem, StreamDefinition } from '../streams/index.js';
import type { SourceRegistry } from './contracts.js';
import { CODECS } from './filebase/formats.js';
import { isInside } from './paths.js';

/**
 * Source settings checked when a definition is loaded or written, so a bad definition
 * is refused (boot error or 409) instead of failing at its first request.
 */
export function checkSourceConfig(definition: StreamDefinition, sources: SourceRegistry, root: string): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const source = definition.config.source;
  if (!source || typeof source.type !== 'string') return problems;
  if (!sources.hasType(source.type)) {
    problems.push({ path: '/config/source/type', message: `unknown source type "${source.type}" (known: ${sources.types().join(', ')})` });
  }
  for (const key of ['path', 'file'] as const) {
    const value = source[key];
    if (typeof value === 'string' && (value.includes('\0') || !isInside(root, path.resolve(root, value)))) {
      problems.push({ path: `/config/source/${key}`, message: 'must stay inside the application root' });
    }
  }
  const format = source.format;
  if (typeof format === 'string') {
    if (source.type === 'filebase' && !CODECS[format]) {
      problems.push({ path: '/config/source/format', message: `filebase reads ${Object.keys(CODECS).join(', ')}, not "${format}"` });
    }
    if (source.type === 'file' && format !== 'json' && format !== 'csv') {
      problems.push({ path: '/config/source/format', message: `the file source reads json or csv, not "${format}"` });
    }
  }
  return problems;
}
