import { MongoClient, type Db, type MongoClientOptions, type TopologyDescriptionChangedEvent } from 'mongodb';
import { AppError, backoffDelay, ConfigError, type KernelConfig, type Logger } from '../../kernel/index.js';
import type { MongoConnectionConfig } from './settings.js';

/** Connection name pattern: it appears in logs and config paths, keep it boring. */
const CONNECTION_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Plugin defaults (docs/mongodb.md "Timeouts"), under what the connection string and the
 * connection's `options` say: acknowledged writes must survive a primary failover
 * (majority + journal), and reads never return data that could be rolled back
 * (majority). Nothing waits unbounded: server selection (no primary), a free pooled
 * connection and the majority acknowledgement each give up after a few seconds, and the
 * request answers 503 with Retry-After; the background retry loop handles reconnection.
 * Flat options (`w`, `journal`, `wtimeoutMS`, `readConcernLevel`) so each can be
 * overridden alone by the same option in the connection string.
 */
export const DEFAULT_CLIENT_OPTIONS: MongoClientOptions = {
  appName: 'streams-kernel',
  retryWrites: true,
  retryReads: true,
  w: 'majority',
  journal: true,
  wtimeoutMS: 10_000,
  readConcernLevel: 'majority',
  serverSelectionTimeoutMS: 5000,
  waitQueueTimeoutMS: 5000,
};

/** Connection-string spellings (lower case) of each default, aliases included. */
const URL_NAMES: Record<string, string[]> = {
  w: ['w'],
  journal: ['journal', 'j'],
  wtimeoutMS: ['wtimeoutms', 'wtimeout'],
  readConcernLevel: ['readconcernlevel'],
};

/**
 * The plugin defaults minus every option the connection string sets itself: the driver
 * lets an options object win over the string, so a default passed along would silently
 * override what the operator wrote in the URL. A connection's `options` object (config)
 * still wins over both, as in the driver.
 */
export function defaultsUnder(url: string, configured: MongoClientOptions | undefined): MongoClientOptions {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const inUrl = new Set([...new URLSearchParams(query).keys()].map((k) => k.toLowerCase()));
  const defaults: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(DEFAULT_CLIENT_OPTIONS)) {
    const spellings = URL_NAMES[name] ?? [name.toLowerCase()];
    if (spellings.some((s) => inUrl.has(s))) continue;
    defaults[name] = value;
  }
  // An options object naming a whole write or read concern replaces the flat defaults.
  if (configured?.writeConcern !== undefined) for (const name of ['w', 'journal', 'wtimeoutMS']) delete defaults[name];
  if (configured?.readConcern !== undefined) delete defaults.readConcernLevel;
  return defaults as MongoClientOptions;
}

export interface RetryPolicy {
  /** First delay after a failed connect. */
  initialDelayMs: number;
  /** Upper bound of the exponential backoff. */
  maxDelayMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { initialDelayMs: 500, maxDelayMs: 30_000 };

/** 503 while the database cannot be reached: the client may retry, nothing was changed. */
export class DatabaseUnavailableError extends AppError {
  constructor(connection: string) {
    super(503, `The database connection "${connection}" is not available; retry later.`);
    this.name = 'DatabaseUnavailableError';
    this.headers = [['Retry-After', '2']];
  }
}

/**
 * A primary (or a standalone server, a mongos, a load balancer) is selectable: writes can
 * go through. Data-bearing secondaries alone are not enough for a node to be ready.
 */
export function hasWritableServer(description: { servers: Map<string, { type: string }> }): boolean {
  for (const server of description.servers.values()) {
    if (server.type === 'RSPrimary' || server.type === 'Standalone' || server.type === 'Mongos' || server.type === 'LoadBalancer') return true;
  }
  return false;
}

/**
 * One named connection: one pooled MongoClient for the whole process, opened at boot
 * and retried in the background until it succeeds, so an unreachable server never
 * stops the kernel from serving other sources.
 */
export class MongoConnection {
  readonly client: MongoClient;
  readonly db: Db;
  private connected = false;
  private writable = false;
  private closed = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Ends the current backoff sleep early (close). */
  private wake: (() => void) | undefined;
  private connecting: Promise<void> | undefined;
  private readonly waiters = new Set<() => void>();
  /** Sources and definition stores using this client (see MongoConnections.shutdown). */
  private users = 0;
  private closeWhenUnused = false;

  constructor(
    readonly name: string,
    readonly database: string,
    url: string,
    options: MongoClientOptions,
    private readonly logger: Logger,
    private readonly retry: RetryPolicy,
    driver?: MongoDriver,
  ) {
    this.client = driver ? driver(url, options) : new MongoClient(url, options);
    this.db = this.client.db(database);
    // Readiness follows the driver's own view of the topology (heartbeats), so /readyz
    // turns false while no primary is reachable and true again when one is elected.
    this.client.on('topologyDescriptionChanged', (event: TopologyDescriptionChangedEvent) => {
      this.writable = hasWritableServer(event.newDescription);
    });
  }

  /** A source or store starts using the client; pair with `release`. */
  acquire(): this {
    this.users += 1;
    return this;
  }

  /** A user is done; the last one closes the client once shutdown was asked for. */
  release(): Promise<void> {
    this.users = Math.max(0, this.users - 1);
    return this.users === 0 && this.closeWhenUnused ? this.close() : Promise.resolve();
  }

  /** Close now when nobody uses the client, else when the last user releases it. */
  closeWhenIdle(): Promise<void> {
    this.closeWhenUnused = true;
    return this.users === 0 ? this.close() : Promise.resolve();
  }

  /** Connected once and the driver currently sees a primary (writes can go through). */
  isReady(): boolean {
    return this.connected && this.writable && !this.closed;
  }

  /** Start connecting (idempotent); failures are logged and retried with backoff. */
  open(): void {
    if (this.connecting || this.closed) return;
    this.connecting = this.tryConnect();
  }

  /**
   * Resolves once connected; rejects with a 503 after `timeoutMs` (a request should
   * not wait for the whole backoff).
   */
  async whenConnected(timeoutMs: number): Promise<void> {
    if (this.connected) return;
    this.open();
    await new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(done);
        reject(new DatabaseUnavailableError(this.name));
      }, timeoutMs);
      timer.unref();
      this.waiters.add(done);
    });
  }

  private async tryConnect(): Promise<void> {
    while (!this.closed) {
      this.attempt += 1;
      try {
        await this.client.connect();
        await this.db.command({ ping: 1 });
        this.connected = true;
        // The ping was selected with read preference primary: a primary answered.
        this.writable = true;
        this.logger.info({ connection: this.name, database: this.database, attempt: this.attempt }, 'mongodb connected');
        for (const wake of [...this.waiters]) wake();
        return;
      } catch (error) {
        if (this.closed) return;
        const delay = backoffDelay(this.attempt, this.retry.initialDelayMs, this.retry.maxDelayMs);
        this.logger.error(
          { connection: this.name, attempt: this.attempt, retryInMs: delay, err: { message: (error as Error).message, name: (error as Error).name } },
          `mongodb connection "${this.name}" is unreachable; retrying in ${delay} ms (other sources keep serving)`,
        );
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.timer = setTimeout(resolve, delay);
        });
        this.timer = undefined;
        this.wake = undefined;
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.client.close(true);
    await this.connecting?.catch(() => undefined);
  }
}

/** Makes the client of a connection (MONGODB_DRIVER); default `new MongoClient(url, options)`. */
export type MongoDriver = (url: string, options: MongoClientOptions) => MongoClient;

export interface ConnectionsOptions {
  /** Asked when a connection is first used (a plugin may register one after this plugin's register). */
  driver?: () => MongoDriver | undefined;
  retry?: Partial<RetryPolicy>;
  /** Options forced over every connection's (tests: a short serverSelectionTimeoutMS). */
  clientOverrides?: MongoClientOptions;
  env?: NodeJS.ProcessEnv;
}

/**
 * The registry of named connections from `mongodb.connections`. A connection is created
 * the first time a stream (or the definition store) names it, and lives until shutdown.
 * `default` exists even when not configured: its URL then comes from MONGODB_URL.
 */
export class MongoConnections {
  private readonly open = new Map<string, MongoConnection>();
  private readonly retry: RetryPolicy;

  constructor(
    private readonly config: KernelConfig['mongodb'],
    private readonly logger: Logger,
    private readonly options: ConnectionsOptions = {},
  ) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  /** The settings of a connection, defaults applied; ConfigError when unusable. */
  settings(name: string): { url: string; database: string; options: MongoClientOptions } {
    if (!CONNECTION_NAME.test(name)) throw new ConfigError(`"${name}" is not a valid mongodb connection name`, 'config', '/mongodb/connections');
    const configured: Partial<MongoConnectionConfig> | undefined = Object.hasOwn(this.config.connections, name)
      ? this.config.connections[name]
      : undefined;
    if (!configured && name !== 'default') {
      throw new ConfigError(`mongodb connection "${name}" is not configured (known: ${Object.keys(this.config.connections).join(', ') || 'none'})`, 'config', '/mongodb/connections');
    }
    const env = this.options.env ?? process.env;
    const urlEnv = configured?.url_env ?? 'MONGODB_URL';
    const url = configured?.url ?? env[urlEnv];
    if (!url) {
      throw new ConfigError(`mongodb connection "${name}" has no url: set mongodb.connections.${name}.url or the ${urlEnv} environment variable`, 'config', `/mongodb/connections/${name}`);
    }
    if (!/^mongodb(\+srv)?:\/\//.test(url)) {
      throw new ConfigError(`mongodb connection "${name}": the url must start with mongodb:// or mongodb+srv://`, 'config', `/mongodb/connections/${name}`);
    }
    return {
      url,
      database: configured?.database ?? 'streams',
      options: {
        ...defaultsUnder(url, configured?.options as MongoClientOptions | undefined),
        ...(configured?.options as MongoClientOptions | undefined),
        ...this.options.clientOverrides,
      },
    };
  }

  /** The connection (created and connecting in the background on first use). */
  get(name = 'default'): MongoConnection {
    let connection = this.open.get(name);
    if (!connection) {
      const { url, database, options } = this.settings(name);
      connection = new MongoConnection(name, database, url, options, this.logger, this.retry, this.options.driver?.());
      this.open.set(name, connection);
      connection.open();
    }
    return connection;
  }

  names(): string[] {
    return [...this.open.keys()];
  }

  /** Every connection used so far is up (an unused connection does not count). */
  ready(): boolean {
    for (const connection of this.open.values()) if (!connection.isReady()) return false;
    return true;
  }

  /**
   * Graceful shutdown. The plugin shuts down before the HTTP server has drained (reverse
   * boot order), so a client used by a source or a definition store stays open until
   * that user closes (the sources and streams plugins close theirs later); unused
   * clients close now. A timer forces the rest closed if a user never releases.
   */
  async shutdown(forceAfterMs: number): Promise<void> {
    const all = [...this.open.values()];
    const forced = setTimeout(() => void this.close(), forceAfterMs);
    forced.unref();
    await Promise.all(all.map((c) => c.closeWhenIdle().catch((error: unknown) => this.logger.error({ err: error, connection: c.name }, 'mongodb close failed'))));
  }

  /** Close every client now. */
  async close(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map((c) => c.close().catch((error: unknown) => this.logger.error({ err: error, connection: c.name }, 'mongodb close failed'))));
  }
}
