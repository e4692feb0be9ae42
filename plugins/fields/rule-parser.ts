/** One rule of a `rules` list: `max:25` -> `{name: 'max', args: ['25']}`. */
export interface ParsedRule {
  name: string;
  args: string[];
  /** The rule as written, for messages. */
  source: string;
}

/**
 * Laravel syntax: the name ends at the first `:`, arguments are comma-separated.
 * `regex` and `not_regex` keep their whole argument (a pattern may hold commas).
 */
export function parseRule(source: string): ParsedRule {
  const text = source.trim();
  const colon = text.indexOf(':');
  if (colon < 0) return { name: text, args: [], source: text };
  const name = text.slice(0, colon).trim();
  const rest = text.slice(colon + 1);
  if (name === 'regex' || name === 'not_regex' || name === 'date_format') return { name, args: [rest], source: text };
  return { name, args: rest.split(',').map((a) => a.trim()), source: text };
}
