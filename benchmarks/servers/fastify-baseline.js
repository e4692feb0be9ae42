#!/usr/bin/env node
// The hand-written baseline of issue #16: what a competent developer would write in an
// afternoon with fastify 5 to serve the same entries. It reads the same entry files as the
// product, keeps them in one array, and answers the benchmark's questions with plain code:
// a Map for one entry, Array.filter + Array.sort + slice for a filtered, sorted page.
// No cache of any kind (every request of the uncached scenario has a filter value of its own).
//
// Usage: node benchmarks/servers/fastify-baseline.js --data <folder of N.json files> --port N
// Prints {"port":N} once listening; answers /readyz 503 until the entries are loaded.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';

const { values } = parseArgs({ options: { data: { type: 'string' }, port: { type: 'string', default: '0' } } });
if (!values.data) {
  process.stderr.write('usage: fastify-baseline.js --data <folder> [--port N]\n');
  process.exit(2);
}

let items = [];
const byId = new Map();
let loaded = false;

function load() {
  const folder = path.resolve(values.data);
  const list = [];
  for (const name of readdirSync(folder)) {
    if (!name.endsWith('.json')) continue;
    list.push(JSON.parse(readFileSync(path.join(folder, name), 'utf8')));
  }
  list.sort((a, b) => a.id - b.id);
  items = list;
  for (const item of list) byId.set(item.id, item);
  loaded = true;
}

const app = Fastify({ logger: false });

app.get('/readyz', async (_request, reply) => {
  if (!loaded) return reply.code(503).send({ ready: false });
  return { ready: true };
});

app.get('/items/:id', async (request, reply) => {
  const item = byId.get(Number(request.params.id));
  if (!item) return reply.code(404).send({ errors: [{ status: 404, title: 'Not Found' }] });
  return { data: item };
});

// GET /items?category=books&price_gte=12.5&sort=year&order=desc&page=1&per_page=20
// Ties of the sort field fall back to id ascending, as the product's do.
app.get('/items', async (request) => {
  const q = request.query;
  const perPage = Math.min(1000, Math.max(1, Number(q.per_page) || 20));
  const page = Math.max(1, Number(q.page) || 1);
  const category = q.category;
  const min = q.price_gte === undefined ? undefined : Number(q.price_gte);
  let list = items;
  if (category !== undefined || min !== undefined) {
    list = items.filter((item) => (category === undefined || item.category === category) && (min === undefined || item.price >= min));
  }
  if (q.sort) {
    const field = q.sort;
    const sign = q.order === 'desc' ? -1 : 1;
    list = list === items ? items.slice() : list;
    list.sort((a, b) => {
      const x = a[field];
      const y = b[field];
      if (x !== y) return (x < y ? -1 : 1) * sign;
      return a.id - b.id;
    });
  }
  const start = (page - 1) * perPage;
  return { data: list.slice(start, start + perPage), meta: { total: list.length, page, per_page: perPage } };
});

// Listen first, then load (as most servers do); /readyz tells when it serves.
const address = await app.listen({ host: '127.0.0.1', port: Number(values.port) });
process.stdout.write(`${JSON.stringify({ port: new URL(address).port ? Number(new URL(address).port) : Number(values.port) })}\n`);
setImmediate(() => {
  const started = performance.now();
  load();
  process.stdout.write(`${JSON.stringify({ loaded: items.length, ms: Math.round(performance.now() - started) })}\n`);
});
process.once('SIGTERM', () => {
  app.close().then(() => process.exit(0));
});
