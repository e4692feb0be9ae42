#!/usr/bin/env node
// The minimal loader of issue #33: the least a server can do before it serves every entry of
// a filebase folder. It lists the folder, reads and JSON.parses every file into a Map (one
// synchronous loop: the fastest Node offers for many small files), then listens on node:http
// and answers /readyz, /healthz and GET /<stream>/<key> from the Map. The product's boot to
// its first servable entry is measured against it in the same run (lib/readiness.js).
//
// Usage: node benchmarks/servers/minimal-loader.js --data <folder of N.json files> --port N
// Prints {"port":N} once listening (after loading).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

// Not `import http from 'node:http'`: on Node 22+ that ES module facade loads Node's internal
// undici (~25 ms); the product avoids it too (kernel/tools/node-http.ts), and a minimal loader
// pays no more than it must.
const http = process.getBuiltinModule('node:http');

const { values } = parseArgs({ options: { data: { type: 'string' }, port: { type: 'string', default: '0' } } });
if (!values.data) {
  process.stderr.write('usage: minimal-loader.js --data <folder> [--port N]\n');
  process.exit(2);
}

const folder = path.resolve(values.data);
const byKey = new Map();
for (const name of readdirSync(folder)) {
  if (!name.endsWith('.json')) continue;
  const entry = JSON.parse(readFileSync(path.join(folder, name), 'utf8'));
  byKey.set(String(entry.id), entry);
}

const OK = JSON.stringify({ status: 'ok' });
const server = http.createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/readyz' || url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(OK);
    return;
  }
  const entry = byKey.get(url.slice(url.lastIndexOf('/') + 1));
  if (entry === undefined) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"message":"not found"}]}');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: entry }));
});
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port, entries: byKey.size })}\n`);
  process.once('SIGTERM', () => process.exit(0));
});
