import type { KernelConfig } from '../../kernel/index.js';
import type { CheckContext, DefinitionProblem, StreamDefinition, StreamRegistry } from '../streams/index.js';
import { compileUri } from './uri.js';

/** Could `pattern` (`/a/:p0`) match some path under `prefix` (`/api`)? A parameter segment matches anything. */
function overlapsPrefix(pattern: string, prefix: string): boolean {
  const route = pattern.split('/').slice(1);
  const reserved = prefix.split('/').slice(1).filter((s) => s !== '');
  if (reserved.length === 0) return true; // an interface at the root owns every path
  return reserved.every((segment, i) => i < route.length && (route[i] === segment || route[i]!.startsWith(':')));
}

/** Could two patterns match one path? (same length, each segment equal or a parameter) */
function overlaps(a: string, b: string): boolean {
  const x = a.split('/');
  const y = b.split('/');
  return x.length === y.length && x.every((s, i) => s === y[i] || s.startsWith(':') || y[i]!.startsWith(':'));
}

/** The paths the product owns: every interface prefix (and what is under it), `/healthz`, `/readyz`. */
function reservedPrefixes(config: KernelConfig): string[] {
  const interfaces = config.api.interfaces.length > 0 ? config.api.interfaces.map((i) => i.prefix ?? config.api.prefix) : [config.api.prefix];
  return [...interfaces.map((p) => `/${p.replace(/^\/+|\/+$/g, '')}`.replace(/^\/$/, '')), '/healthz', '/readyz'];
}

/**
 * Stream routes never shadow the API or another stream: a route that could match a path
 * under an interface prefix, `/healthz`, `/readyz`, or a path another stream's route
 * serves is a definition problem (409 over the API, a boot error in a file), naming the
 * conflict. (Before, `/:a/:b/:c` took `/api/streams/x` away from the gate.)
 */
export function routeConflictCheck(config: KernelConfig) {
  const reserved = reservedPrefixes(config);
  return (definition: StreamDefinition, registry: StreamRegistry, _context: CheckContext): DefinitionProblem[] => {
    const problems: DefinitionProblem[] = [];
    definition.routes.forEach((route, index) => {
      const compiled = compileUri(route.uri);
      if (typeof compiled === 'string') return;
      const where = `/routes/${index}/uri`;
      const prefix = reserved.find((p) => overlapsPrefix(compiled.pattern, p));
      if (prefix !== undefined) {
        problems.push({ path: where, message: `route "${route.uri}" would shadow ${prefix === '' ? 'the API at the root' : `"${prefix}"`}, which the server owns` });
        return;
      }
      for (const other of registry.list()) {
        if (other.id === definition.id) continue;
        const taken = other.routes.find((r) => {
          const theirs = compileUri(r.uri);
          return typeof theirs !== 'string' && overlaps(theirs.pattern, compiled.pattern) && sameVerb(r.verb, route.verb);
        });
        if (taken) {
          problems.push({ path: where, message: `route "${route.uri}" collides with route "${taken.uri}" of stream [${other.id}]` });
          return;
        }
      }
    });
    return problems;
  };
}

function sameVerb(a: string | undefined, b: string | undefined): boolean {
  const x = (a ?? 'any').toLowerCase();
  const y = (b ?? 'any').toLowerCase();
  return x === 'any' || y === 'any' || x === y;
}
