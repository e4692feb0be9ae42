#!/usr/bin/env node
// The ceilings the product is measured against: the least work a bare server can do to give
// the same answers, on uWebSockets.js (the product's native transport) or on node:http (its
// fallback, issue #33).
//  - replay: every (method, URL) captured from the product is answered from memory with
//    the product's exact status, headers and body bytes (one Map lookup, one write);
//    with --body-only, only `content-type` and the body (a stricter ceiling: the product
//    also sends its ETag and other headers);
//  - durable write: any other POST/PATCH reads its body, writes it with temp file + fsync +
//    rename + fsync of the folder (the same steps as kernel/tools/durable-fs.ts), then answers
//    with the bytes the product answered to a create/patch.
// Usage: node benchmarks/servers/ceiling.js --captures <file.json> --dir <write folder>
//          [--transport uws|node] [--body-only]
// Prints {"port":N,"transport":...} once listening; SIGTERM stops it. Exits 3 when
// --transport uws (the default) has no native binary for this Node.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { captures: { type: 'string' }, dir: { type: 'string' }, transport: { type: 'string', default: 'uws' }, 'body-only': { type: 'boolean' } } });
if (!values.captures || !values.dir || !['uws', 'node'].includes(values.transport)) {
  process.stderr.write('usage: ceiling.js --captures <file.json> --dir <write folder> [--transport uws|node] [--body-only]\n');
  process.exit(2);
}
const bodyOnly = Boolean(values['body-only']);
const STATUS_TEXT = { 200: 'OK', 201: 'Created', 204: 'No Content', 400: 'Bad Request', 404: 'Not Found', 409: 'Conflict', 500: 'Internal Server Error' };

/** Precompute everything a reply needs, so the hot path only writes. */
function prepare(capture) {
  let headers = Object.entries(capture.headers ?? {});
  if (bodyOnly) headers = headers.filter(([name]) => name === 'content-type');
  return {
    code: capture.status,
    status: `${capture.status} ${STATUS_TEXT[capture.status] ?? 'Status'}`,
    headers,
    // node:http's writeHead takes a flat [name, value, ...] list (its fastest form).
    flat: [...headers.flat(), 'content-length', String(Buffer.from(capture.body, 'base64').length)],
    body: Buffer.from(capture.body, 'base64'),
  };
}

const captures = JSON.parse(readFileSync(values.captures, 'utf8'));
const replay = new Map(captures.replay.map((c) => [`${c.method} ${c.url}`, prepare(c)]));
if (!captures.replay.some((c) => c.method === 'GET')) {
  // A captures file written by a run of writes alone (`--only patch,create`) holds no reads: a
  // hand-run comparison of GETs against it would measure 404s.
  process.stderr.write(`ceiling.js: ${values.captures} holds no GET replies: every GET is answered 404 (capture again with a run that reads)\n`);
}
const writes = Object.fromEntries(Object.entries(captures.writes ?? {}).map(([method, c]) => [method, prepare(c)]));
const dir = path.resolve(values.dir);
mkdirSync(dir, { recursive: true });
let created = 0;

const NOT_FOUND = prepare({ status: 404, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"errors":[{"message":"not captured"}]}').toString('base64') });
const FAILED = prepare({ status: 500, headers: {}, body: Buffer.from('{}').toString('base64') });

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

/** The answer to a request with a body: a captured one, or a durable write then the product's write answer. */
function answerWrite(method, url, body, send) {
  const hit = replay.get(`${method} ${url}`);
  if (hit) return send(hit);
  const reply = writes[method];
  if (!reply) return send(NOT_FOUND);
  // POST makes a new file; PATCH rewrites the file named by the last URL segment.
  const last = url.split('?')[0].split('/').pop();
  const name = method === 'POST' ? `c${++created}.json` : `${/^[A-Za-z0-9_-]{1,64}$/.test(last) ? last : 'x'}.json`;
  writeDurable(path.join(dir, name), body).then(
    () => send(reply),
    (error) => {
      process.stderr.write(`write failed: ${error.message}\n`);
      send(FAILED);
    },
  );
}

function listening(port) {
  process.stdout.write(`${JSON.stringify({ port, transport: values.transport, bodyOnly })}\n`);
}

if (values.transport === 'node') {
  const server = http.createServer((req, res) => {
    const method = req.method;
    const url = req.url;
    const send = (reply) => {
      res.writeHead(reply.code, reply.flat);
      res.end(reply.body);
    };
    if (method === 'GET' || method === 'HEAD') return send(replay.get(`${method} ${url}`) ?? NOT_FOUND);
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => answerWrite(method, url, Buffer.concat(chunks), send));
  });
  server.keepAliveTimeout = 10_000;
  server.listen(0, '127.0.0.1', () => {
    listening(server.address().port);
    process.once('SIGTERM', () => process.exit(0));
  });
} else {
  // The same native module the product loads (plugins/http/uws-loader.ts), so the ceiling
  // and the product always run the same uWebSockets.js build.
  const { loadNativeUws } = await import('../../dist/plugins/http/uws-loader.js');
  const loaded = loadNativeUws();
  if (!loaded.ok) {
    process.stderr.write(`ceiling.js: ${loaded.reason}\n`);
    process.exit(3);
  }
  const uWS = loaded.native.uws;
  const send = (res, reply) =>
    res.cork(() => {
      res.writeStatus(reply.status);
      for (const [name, value] of reply.headers) res.writeHeader(name, value);
      res.end(reply.body);
    });
  /** Read the whole body (chunks copied: uWS neuters each ArrayBuffer after the callback). */
  const readBody = (res, done) => {
    const chunks = [];
    res.onData((chunk, last) => {
      chunks.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
      if (last) done(Buffer.concat(chunks));
    });
  };
  const app = uWS.App();
  app.any('/*', (res, req) => {
    const method = req.getMethod().toUpperCase();
    const query = req.getQuery();
    const url = query ? `${req.getUrl()}?${query}` : req.getUrl();
    if (method === 'GET' || method === 'HEAD') return send(res, replay.get(`${method} ${url}`) ?? NOT_FOUND);
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    readBody(res, (body) =>
      answerWrite(method, url, body, (reply) => {
        if (!aborted) send(res, reply);
      }),
    );
  });
  app.listen('127.0.0.1', 0, (socket) => {
    if (!socket) {
      process.stderr.write('ceiling: cannot listen\n');
      process.exit(1);
    }
    listening(uWS.us_socket_local_port(socket));
    process.once('SIGTERM', () => {
      uWS.us_listen_socket_close(socket);
      process.exit(0);
    });
  });
}
