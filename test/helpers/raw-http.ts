import net from 'node:net';

/**
 * Raw HTTP over a socket, for what undici refuses to send (pipelining, lying lengths, slow
 * bodies, HTTP/1.0, bad methods): writes `text`, collects everything until the server
 * closes or `waitMs` passes. `target` is a port or a `http://host:port` URL.
 */
export function rawHttp(target: number | string, text: string, waitMs = 300): Promise<string> {
  const port = typeof target === 'number' ? target : Number(new URL(target).port);
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
    socket.write(text);
    setTimeout(() => socket.destroy(), waitMs);
  });
}
