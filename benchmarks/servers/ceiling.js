#!/usr/bin/env node
// The ceilings the product is measured against: the least work a uWebSockets.js server
// can do to give the same answers.
//  - replay: every (method, URL) captured from the product is answered from memory with
//    the product's exact status, headers and body bytes (one Map lookup, one cork);
//  - durable write: any other POST/PATCH reads its body, writes it with temp file + fsync +
//    rename + fsync of the folder (the same steps as kernel/durable-fs.ts), then answers
//    with the bytes the product answered to a create/patch.
// Usage: node benchmarks/servers/ceiling.js --captures <file.json> --dir <write folder>
// Prints {"port":N} once listening; SIGTERM stops it.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
// The same native module the product loads (plugins/http/uws-loader.ts), so the ceiling
// and the product always run the same uWebSockets.js build.
import { loadNativeUws } from '../../dist/plugins/http/uws-loader.js';

const loaded = loadNativeUws();
if (!loaded.ok) {
  process.stderr.write(`ceiling.js: ${loaded.reason}\n`);
  process.exit(3);
}
const uWS = loaded.native.uws;

const { values } = parseArgs({ options: { captures: { type: 'string' }, dir: { type: 'string' } } });
if (!values.captures || !values.dir) {
  process.stderr.write('usage: ceiling.js --captures <file.json> --dir <write folder>\n');
  process.exit(2);
}
const STATUS_TEXT = { 200: 'OK', 201: 'Created', 204: 'No Content', 400: 'Bad Request', 404: 'Not Found', 409: 'Conflict', 500: 'Internal Server Error' };

/** Precompute everything a reply needs, so the hot path only writes. */
function prepare(capture) {
  return {
    status: `${capture.status} ${STATUS_TEXT[capture.status] ?? 'Status'}`,
    headers: Object.entries(capture.headers ?? {}),
    body: Buffer.from(capture.body, 'base64'),
  };
}

const captures = JSON.parse(readFileSync(values.captures, 'utf8'));
const replay = new Map(captures.replay.map((c) => [`${c.method} ${c.url}`, prepare(c)]));
const writes = Object.fromEntries(Object.entries(captures.writes ?? {}).map(([method, c]) => [method, prepare(c)]));
const dir = path.resolve(values.dir);
mkdirSync(dir, { recursive: true });
let created = 0;

function send(res, reply) {
  res.cork(() => {
    res.writeStatus(reply.status);
    for (const [name, value] of reply.headers) res.writeHeader(name, value);
    res.end(reply.body);
  });
}

const NOT_FOUND = prepare({ status: 404, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"errors":[{"message":"not captured"}]}').toString('base64') });

async function fsyncDir(folder) {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function writeDurable(file, data) {
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  await fsyncDir(dir);
}

/** Read the whole body (chunks copied: uWS neuters each ArrayBuffer after the callback). */
function readBody(res, done) {
  const chunks = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
    if (last) done(Buffer.concat(chunks));
  });
}

const app = uWS.App();
app.any('/*', (res, req) => {
  const method = req.getMethod().toUpperCase();
  const query = req.getQuery();
  const url = query ? `${req.getUrl()}?${query}` : req.getUrl();
  const hit = replay.get(`${method} ${url}`);
  if (method === 'GET' || method === 'HEAD') {
    send(res, hit ?? NOT_FOUND);
    return;
  }
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  readBody(res, (body) => {
    if (hit) {
      send(res, hit);
      return;
    }
    const reply = writes[method];
    if (!reply) {
      send(res, NOT_FOUND);
      return;
    }
    // POST makes a new file; PATCH rewrites the file named by the last URL segment.
    const last = url.split('?')[0].split('/').pop();
    const name = method === 'POST' ? `c${++created}.json` : `${/^[A-Za-z0-9_-]{1,64}$/.test(last) ? last : 'x'}.json`;
    writeDurable(path.join(dir, name), body).then(
      () => {
        if (!aborted) send(res, reply);
      },
      (error) => {
        process.stderr.write(`write failed: ${error.message}\n`);
        if (!aborted) send(res, { status: '500 Internal Server Error', headers: [], body: Buffer.from('{}') });
      },
    );
  });
});

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('ceiling: cannot listen\n');
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ port: uWS.us_socket_local_port(socket), native: typeof uWS.getParts === 'function' })}\n`);
  process.once('SIGTERM', () => {
    uWS.us_listen_socket_close(socket);
    process.exit(0);
  });
});
