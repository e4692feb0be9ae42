/** A stream route URI (`/books/{id}`) turned into a router pattern (`/books/:p0`). */
export interface CompiledUri {
  pattern: string;
  /** Placeholder name of each `:pN` parameter, in order. */
  names: string[];
}

const PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_.]*)\}$/;

/**
 * Only whole-segment placeholders are supported (`/books/{id}`, `/p/{entry.slug}`):
 * the router matches segments. Returns a reason when the URI cannot be served.
 */
export function compileUri(uri: string): CompiledUri | string {
  if (!uri.startsWith('/')) uri = `/${uri}`;
  const names: string[] = [];
  const segments = uri.split('/').map((segment) => {
    const match = PLACEHOLDER.exec(segment);
    if (match) {
      names.push(match[1]!);
      return `:p${names.length - 1}`;
    }
    if (segment.includes('{') || segment.includes('}')) return undefined;
    return segment;
  });
  if (segments.includes(undefined)) return `only whole-segment placeholders such as /books/{id} are supported, got "${uri}"`;
  return { pattern: segments.join('/') || '/', names };
}
