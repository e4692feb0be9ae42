// Small statistics helpers: medians of interleaved runs, and ratios that stay null
// (not NaN or Infinity) when one side is missing.
export function median(values) {
  const list = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (list.length === 0) return null;
  const mid = Math.floor(list.length / 2);
  return list.length % 2 ? list[mid] : (list[mid - 1] + list[mid]) / 2;
}

/** Coefficient of variation (stdev / mean) of the runs: how much to trust a median. */
export function cv(values) {
  const list = values.filter((v) => Number.isFinite(v));
  if (list.length < 2) return null;
  const mean = list.reduce((a, b) => a + b, 0) / list.length;
  const variance = list.reduce((a, b) => a + (b - mean) ** 2, 0) / (list.length - 1);
  return mean ? Math.sqrt(variance) / mean : null;
}

export function ratio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : null;
}

export function summarize(runs) {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    rpsCv: cv(runs.map((r) => r.rps)),
    errors: runs.reduce((sum, r) => sum + (r.errors || 0), 0),
    requests: runs.reduce((sum, r) => sum + (r.requests || 0), 0),
  };
}

/** The p-th percentile of an ascending list (nearest rank below); null when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
