/**
 * Loud typos (issue #27): a definition key that no spec rule and no loaded plugin declares is
 * accepted (addons extend definitions, and the spec allows keys for them) but reported, with
 * the nearest known key when one is close ("confg": did you mean `config`?).
 */

/**
 * Warnings for the top-level keys of `raw` outside `known`. Only the top level: `config` and
 * field bodies are open to addons without a declaration (the spec's extension points).
 */
export function unknownKeyWarnings(raw: Record<string, unknown>, known: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const key of Object.keys(raw)) {
    if (known.includes(key)) continue;
    const near = nearest(key, known);
    const hint = near === undefined ? '' : `; did you mean \`${near}\`?`;
    warnings.push(`unknown definition key \`${key}\`: no spec rule and no loaded plugin declares it (kept as written)${hint}`);
  }
  return warnings;
}

/**
 * The known name within edit distance 2 (1 for short names) of `key`, the closest first: the
 * "did you mean" of definition keys and of query parameters. Long input is not compared.
 */
export function nearest(key: string, known: readonly string[]): string | undefined {
  if (key.length > 64) return undefined;
  const limit = key.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance (keys are short: the plain two-row table). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
