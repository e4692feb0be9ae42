import type { Server } from 'node:http';
import { nodeHttp } from '../../kernel/index.js';
import type { Registry } from 'prom-client';
import type { HttpReply } from '../http/index.js';

/** The scrape answer: the text exposition format, as prom-client writes it. */
export async function metricsReply(registry: Registry): Promise<HttpReply> {
  return { status: 200, type: registry.contentType, body: await registry.metrics() };
}

/**
 * `expose: "listener"`: `/metrics` on an address of its own (a private interface, a port
 * only Prometheus reaches), so the public port never serves it. node:http: a scrape every
 * few seconds needs no native transport.
 */
export function listenForScrapes(registry: Registry, host: string, port: number, path: string): Promise<Server> {
  const server = nodeHttp.createServer((request, response) => {
    const url = (request.url ?? '/').split('?')[0];
    if (url !== path || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not Found\n');
      return;
    }
    metricsReply(registry).then(
      (reply) => response.writeHead(200, { 'content-type': reply.type! }).end(request.method === 'HEAD' ? undefined : reply.body),
      () => response.writeHead(500).end(),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => resolve(server));
  });
}
