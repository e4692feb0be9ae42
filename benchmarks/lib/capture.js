// Asks the product every question a replay ceiling will be asked, once, and keeps the
// exact answers (status, headers, body bytes), so the ceiling serves the same bytes.
// When the product cannot answer yet (an endpoint not built, an error status), a
// synthetic envelope built from the generated data stands in and the scenario says so.
import { request } from 'undici';
import { CATEGORIES, entry } from './dataset.js';
import { expand } from './scenarios.js';

/** Headers uWS writes itself (or that describe the connection, not the answer). */
const SKIP_HEADERS = new Set(['content-length', 'date', 'uwebsockets', 'connection', 'keep-alive', 'transfer-encoding']);

async function ask(base, { method, path, body }) {
  const response = await request(`${base}${path}`, {
    method,
    body: body ?? undefined,
    headers: body ? { 'content-type': 'application/json' } : {},
  });
  const bytes = Buffer.from(await response.body.arrayBuffer());
  const headers = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (!SKIP_HEADERS.has(name) && typeof value === 'string') headers[name] = value;
  }
  return { status: response.statusCode, headers, bytes };
}

async function mapLimit(items, limit, task) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await task(items[i], i);
      }
    }),
  );
  return out;
}

/** A stand-in answer shaped like the API envelope, from the generated data. */
function synthetic(scenarioId, path, count) {
  const url = new URL(path, 'http://127.0.0.1');
  const page = Number(url.searchParams.get('page') ?? 1);
  let data;
  if (scenarioId === 'get-one' || scenarioId === 'patch') data = entry(Number(path.split('?')[0].split('/').pop()) || 1);
  else if (scenarioId === 'create') data = entry(count + 1);
  else {
    const all = [];
    const books = scenarioId === 'filtered';
    for (let i = 1; i <= count && all.length < page * 20 + 20; i++) if (!books || CATEGORIES[i % CATEGORIES.length] === 'books') all.push(entry(i));
    data = all.slice((page - 1) * 20, page * 20);
  }
  const meta = Array.isArray(data) ? { total: count, per_page: 20, last_page: Math.ceil(count / 20), current_page: page } : { stream: 'items' };
  return { status: scenarioId === 'create' ? 201 : 200, headers: { 'content-type': 'application/json' }, bytes: Buffer.from(JSON.stringify({ errors: [], links: { self: url.href }, meta, data })) };
}

function record(method, path, answer) {
  return { method, url: path, status: answer.status, headers: answer.headers, body: answer.bytes.toString('base64') };
}

/**
 * Capture the answers for the given scenarios. Returns the ceiling's capture file content
 * and, per scenario, the mean answer size and whether the bytes are the product's.
 */
export async function captureProduct(base, scenarios, count) {
  const replay = [];
  const writes = {};
  const info = {};
  // Writes first: the create adds one entry, and every list captured after it already counts it.
  for (const scenario of scenarios.filter((s) => s.ceiling === 'durable')) {
    const [first] = expand({ ...scenario.product, count: 1, start: scenario.id === 'create' ? 0 : scenario.product.start });
    let answer = await ask(base, first).catch(() => ({ status: 0 }));
    const productStatus = answer.status;
    const fromProduct = productStatus >= 200 && productStatus < 300;
    if (!fromProduct) answer = synthetic(scenario.id, first.path, count);
    writes[first.method] = record(first.method, first.path, answer);
    info[scenario.id] = { bytes: answer.bytes.length, fromProduct, productStatus };
  }
  for (const scenario of scenarios.filter((s) => s.ceiling === 'replay')) {
    const requests = expand(scenario.product);
    const answers = await mapLimit(requests, 16, (r) => ask(base, r).catch(() => ({ status: 0, headers: {}, bytes: Buffer.alloc(0) })));
    let fromProduct = true;
    let firstBad = 0;
    let total = 0;
    answers.forEach((answer, i) => {
      if (!(answer.status >= 200 && answer.status < 300)) {
        if (fromProduct) firstBad = answer.status;
        fromProduct = false;
        answer = synthetic(scenario.id, requests[i].path, count);
      }
      total += answer.bytes.length;
      replay.push(record(requests[i].method, requests[i].path, answer));
    });
    info[scenario.id] = { bytes: Math.round(total / answers.length), fromProduct, productStatus: fromProduct ? answers[0].status : firstBad };
  }
  return { file: { replay, writes }, info };
}

/** One answer from any server (to record the peer's answer size). */
export async function answerSize(base, req) {
  const answer = await ask(base, req).catch(() => null);
  return answer ? { status: answer.status, bytes: answer.bytes.length } : null;
}

/** Load `count` entries into the product through POST (MongoDB datasets). */
export async function seedThroughApi(base, count) {
  const keys = Array.from({ length: count }, (_, i) => i + 1);
  let failures = 0;
  let firstError = '';
  await mapLimit(keys, 32, async (i) => {
    const answer = await ask(base, { method: 'POST', path: '/api/streams/items/entries', body: JSON.stringify(entry(i)) }).catch((error) => ({ status: 0, bytes: Buffer.from(error.message) }));
    if (answer.status !== 201) {
      failures++;
      if (!firstError) firstError = `${answer.status}: ${answer.bytes.toString().slice(0, 300)}`;
    }
  });
  if (failures) throw new Error(`seeding through POST failed for ${failures} of ${count} entries (first: ${firstError})`);
}
