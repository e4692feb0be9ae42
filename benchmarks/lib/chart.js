// A small hand-written SVG of the scaling table (no charting dependency): three panels,
// entry count on a log x axis; boot time, memory, and filtered-list latency.
const W = 300;
const H = 220;
const M = { left: 52, right: 12, top: 30, bottom: 40 };
const COLORS = ['#1f6feb', '#d1242f', '#2da44e'];

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const short = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function panel(x0, title, unit, counts, series) {
  const values = series.flatMap((s) => s.points.map((p) => p[1])).filter(Number.isFinite);
  const ymax = niceMax(Math.max(...values, 0) * 1.05);
  const lx = counts.map(Math.log10);
  const [xmin, xmax] = lx.length > 1 ? [Math.min(...lx), Math.max(...lx)] : [lx[0] - 1, lx[0] + 1];
  const px = (c) => x0 + M.left + ((Math.log10(c) - xmin) / (xmax - xmin || 1)) * (W - M.left - M.right);
  const py = (v) => M.top + (1 - v / ymax) * (H - M.top - M.bottom);
  const parts = [`<text x="${x0 + W / 2}" y="16" text-anchor="middle" font-weight="bold">${esc(title)}</text>`];
  for (let k = 0; k <= 4; k++) {
    const v = (ymax * k) / 4;
    parts.push(`<line x1="${x0 + M.left}" x2="${x0 + W - M.right}" y1="${py(v)}" y2="${py(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${x0 + M.left - 4}" y="${py(v) + 4}" text-anchor="end">${+v.toPrecision(3)}</text>`);
  }
  for (const c of counts) parts.push(`<text x="${px(c)}" y="${H - M.bottom + 16}" text-anchor="middle">${short(c)}</text>`);
  parts.push(`<text x="${x0 + M.left + (W - M.left - M.right) / 2}" y="${H - 6}" text-anchor="middle">entries (log scale), ${esc(unit)}</text>`);
  series.forEach((s, i) => {
    const pts = s.points.filter((p) => Number.isFinite(p[1]));
    if (pts.length === 0) return;
    const color = COLORS[i % COLORS.length];
    if (pts.length > 1) parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([c, v]) => `${px(c).toFixed(1)},${py(v).toFixed(1)}`).join(' ')}"/>`);
    for (const [c, v] of pts) parts.push(`<circle cx="${px(c).toFixed(1)}" cy="${py(v).toFixed(1)}" r="3" fill="${color}"><title>${esc(`${s.name} at ${c}: ${+v.toPrecision(4)} ${unit}`)}</title></circle>`);
    if (series.length > 1) parts.push(`<text x="${x0 + M.left + 6}" y="${M.top + 12 + i * 13}" fill="${color}">${esc(s.name)}</text>`);
  });
  return parts.join('\n');
}

export function scalingSvg(rows, caption) {
  const counts = rows.map((r) => r.count);
  const panels = [
    panel(0, 'Boot time', 'ms', counts, [
      { name: 'first entry served', points: rows.map((r) => [r.count, r.bootMs]) },
      { name: 'listening', points: rows.map((r) => [r.count, r.listeningMs ?? NaN]) },
    ]),
    panel(W, 'Memory, first entry served', 'MB', counts, [{ name: 'RSS', points: rows.map((r) => [r.count, r.rssKb / 1024]) }]),
    panel(2 * W, 'Filtered + sorted page, 1 client', 'ms', counts, [
      { name: 'p50', points: rows.map((r) => [r.count, r.filter?.p50Ms ?? NaN]) },
      { name: 'p99', points: rows.map((r) => [r.count, r.filter?.p99Ms ?? NaN]) },
    ]),
  ];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${3 * W}" height="${H + 18}" viewBox="0 0 ${3 * W} ${H + 18}" font-family="sans-serif" font-size="11">
<rect width="100%" height="100%" fill="#fff"/>
${panels.join('\n')}
<text x="6" y="${H + 12}" fill="#555">${esc(caption)}</text>
</svg>
`;
}
