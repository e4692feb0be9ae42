import net from 'node:net';
import { ConfigError } from '../../kernel/index.js';

/** The configured address cannot be bound: an operator's problem, printed as one line (exit 1). */
export class ListenError extends ConfigError {
  constructor(
    message: string,
    /** The errno code behind it (`EADDRINUSE`...), when there is one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ListenError';
  }
}

/**
 * Probe host:port with an exclusive plain socket. uWebSockets.js binds with SO_REUSEPORT,
 * so without this a second server on a busy port "succeeds" and steals half the
 * connections; node:http gets the same clear message.
 */
export function assertPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export function listenError(error: NodeJS.ErrnoException, host: string, port: number): ListenError {
  switch (error.code) {
    case 'EADDRINUSE':
      return new ListenError(`port ${port} on ${host} is already in use (choose another with --port, or 0 for a free one)`, error.code);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ListenError(`cannot listen on ${host}:${port}: ${host} is not an address of this machine (check --host or http.host)`);
    case 'EACCES':
      return new ListenError(`cannot listen on ${host}:${port}: permission denied (ports below 1024 need privileges)`);
    default:
      return new ListenError(`cannot listen on ${host}:${port}: ${error.message}`);
  }
}
