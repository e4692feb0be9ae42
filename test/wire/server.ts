/**
 * The wire-level stand-in: an in-process TCP server the real `mongodb` driver connects to,
 * answering as the primary of a one-member replica set `rs0` (so change streams are
 * allowed). It speaks OP_MSG (and OP_QUERY for a legacy opening hello): hello, ping,
 * find/getMore, insert/update/delete/findAndModify, aggregate (mingo, or `$changeStream`),
 * createIndexes/listIndexes, killCursors, drop, endSessions. Sessions are accepted and
 * ignored, except that a retried write (same `lsid` + `txnNumber`) gets the first attempt's
 * reply instead of being applied twice, as on a server. No authentication, no TLS.
 *
 * The fault switch (`faults`, plus `cutChangeStreams`, `stepDown`/`stepUp`, `forgetHistory`)
 * makes it fail the way a deployment does; docs/mongodb.md lists what it fakes.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { Binary, Long, ObjectId, type Document } from 'bson';
import { ChangeCursor } from './change-cursor.js';
import { CommandError, WireCollection } from './collection.js';
import { runCrud, type Databases } from './crud.js';
import { Faults } from './faults.js';
import { parseMessage, replyFrame, takeMessage, MORE_TO_COME, type Request } from './frames.js';
import { History } from './history.js';

/** Every test title names the server it ran against. */
export const ON_WIRE = '[wire stand-in]';

const WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'createIndexes', 'drop', 'dropDatabase']);
const READS = new Set(['find', 'aggregate', 'getMore', 'listIndexes', 'count']);
const RETRYABLE = new Set(['insert', 'update', 'delete', 'findAndModify']);

export class WireServer implements Databases {
  readonly history: History;
  readonly faults = new Faults();
  /** Commands served, by name (a test counts round trips). */
  readonly ops = new Map<string, number>();
  private readonly databases = new Map<string, Map<string, WireCollection>>();
  private readonly sockets = new Set<Socket>();
  private readonly cursors = new Map<number, { cursor: ChangeCursor; socket: Socket }>();
  private readonly retried = new Map<string, Document>();
  private server: Server | undefined;
  private port = 0;
  private nextCursor = 1;
  private primary = true;
  private election = 1;

  constructor(options: { keepEvents?: number } = {}) {
    this.history = new History(options.keepEvents);
  }

  async start(): Promise<this> {
    this.server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** A connection string for the driver (a replica set named rs0 with this one member). */
  url(query = ''): string {
    return `mongodb://${this.host}/?replicaSet=rs0${query ? `&${query}` : ''}`;
  }

  async close(): Promise<void> {
    for (const { cursor } of this.cursors.values()) cursor.kill();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  collection(db: string, name: string, create: boolean): WireCollection | undefined {
    let collections = this.databases.get(db);
    if (!collections) {
      if (!create) return undefined;
      this.databases.set(db, (collections = new Map()));
    }
    let collection = collections.get(name);
    if (!collection && create) collections.set(name, (collection = new WireCollection(db, name)));
    return collection;
  }

  /** The documents of `db.name` as stored now (copies). */
  stored(db: string, name: string): Document[] {
    return this.collection(db, name, false)?.select() ?? [];
  }

  drop(db: string, name: string): boolean {
    const existed = this.databases.get(db)?.delete(name) ?? false;
    if (existed) this.history.recordDrop(db, name);
    return existed;
  }

  dropDatabase(db: string): void {
    for (const name of [...(this.databases.get(db)?.keys() ?? [])]) this.drop(db, name);
  }

  // ---- the fault switch -------------------------------------------------------------

  /** Close the connections carrying change streams (of `collection`, or all): a network error mid-stream. */
  cutChangeStreams(collection?: string): number {
    let cut = 0;
    for (const [id, { cursor, socket }] of [...this.cursors]) {
      if (collection !== undefined && cursor.coll !== collection) continue;
      cursor.kill();
      this.cursors.delete(id);
      socket.destroy();
      cut += 1;
    }
    return cut;
  }

  /** The primary steps down: writes answer 10107, reads 13435, waiting getMores 11602; hello says secondary. */
  stepDown(): void {
    this.primary = false;
    for (const { cursor } of this.cursors.values()) cursor.kill();
  }

  /** Elected again (a new election id). */
  stepUp(): void {
    this.primary = true;
    this.election += 1;
  }

  /** The oplog rolled over: resume tokens so far are 286 from now on. */
  forgetHistory(): void {
    this.history.forget();
  }

  /** How many change stream cursors are open (of `collection`, or all). */
  openChangeStreams(collection?: string): number {
    return [...this.cursors.values()].filter(({ cursor }) => !cursor.closed && (collection === undefined || cursor.coll === collection)).length;
  }

  // ---- the protocol -----------------------------------------------------------------

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.setNoDelay(true);
    let buffer: Buffer = Buffer.alloc(0);
    let chain = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        let taken;
        try {
          taken = takeMessage(buffer);
        } catch {
          socket.destroy();
          return;
        }
        if (!taken) break;
        buffer = taken.rest;
        const request = parseMessage(Buffer.from(taken.message));
        // One request at a time per connection, as the server does.
        chain = chain.then(() => this.serve(request, socket));
      }
    });
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
  }

  private async serve(request: Request, socket: Socket): Promise<void> {
    if (socket.destroyed) return;
    const name = Object.keys(request.command)[0]!;
    this.ops.set(name, (this.ops.get(name) ?? 0) + 1);
    let reply: Document;
    let after: ReturnType<Faults['afterWrite']>;
    try {
      reply = await this.run(name, request.command, socket);
      if (RETRYABLE.has(name)) after = this.faults.afterWrite(name, String(request.command[name]));
    } catch (error) {
      if (!(error instanceof CommandError)) {
        reply = { ok: 0, code: 1, errmsg: `wire stand-in: ${(error as Error).message}` };
      } else {
        reply = { ok: 0, code: error.code, errmsg: error.message, ...error.extra };
      }
    }
    reply.operationTime = this.history.now();
    reply.$clusterTime = { clusterTime: this.history.now(), signature: { hash: new Binary(Buffer.alloc(20)), keyId: Long.fromNumber(0) } };
    if (after?.kind === 'drop') {
      socket.destroy(); // applied, but the client never hears it
      return;
    }
    if (after?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, after.ms));
    if (after?.kind === 'writeConcernError') {
      reply.writeConcernError = { code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out (wire stand-in fault)', errInfo: { wtimeout: true } };
    }
    if (request.flags & MORE_TO_COME || socket.destroyed) return;
    socket.write(replyFrame(request, reply));
  }

  private hello(): Document {
    const reply: Document = {
      helloOk: true,
      ismaster: this.primary,
      isWritablePrimary: this.primary,
      secondary: !this.primary,
      setName: 'rs0',
      setVersion: 1,
      hosts: [this.host],
      me: this.host,
      electionId: new ObjectId(this.election.toString(16).padStart(24, '0')),
      maxBsonObjectSize: 16 * 1024 * 1024,
      maxMessageSizeBytes: 48_000_000,
      maxWriteBatchSize: 100_000,
      localTime: new Date(),
      logicalSessionTimeoutMinutes: 30,
      connectionId: 1,
      minWireVersion: 0,
      maxWireVersion: 21,
      readOnly: false,
      lastWrite: { opTime: { ts: this.history.now(), t: Long.fromNumber(this.election) }, lastWriteDate: new Date() },
      ok: 1,
    };
    if (this.primary) reply.primary = this.host;
    return reply;
  }

  private async run(name: string, command: Document, socket: Socket): Promise<Document> {
    switch (name) {
      case 'hello':
      case 'isMaster':
      case 'ismaster':
        return this.hello();
      case 'ping':
      case 'endSessions':
        return { ok: 1 };
      case 'buildInfo':
        return { version: '7.0.0-wire-stand-in', versionArray: [7, 0, 0, 0], ok: 1 };
      case 'killCursors': {
        const ids = (command.cursors as unknown[]).map(Number);
        for (const id of ids) {
          this.cursors.get(id)?.cursor.kill();
          this.cursors.delete(id);
        }
        return { cursorsKilled: ids.map((id) => Long.fromNumber(id)), cursorsNotFound: [], cursorsAlive: [], cursorsUnknown: [], ok: 1 };
      }
    }
    const target = String(command[name]);
    const injected = this.faults.commandError(name, target);
    if (injected) throw new CommandError(injected.code as number, injected.errmsg as string, { errorLabels: injected.errorLabels });
    if (!this.primary && WRITES.has(name)) throw new CommandError(10107, 'not primary (wire stand-in)', { codeName: 'NotWritablePrimary', errorLabels: ['RetryableWriteError'] });
    if (!this.primary && READS.has(name)) throw new CommandError(13435, 'not primary and secondaryOk=false (wire stand-in)', { codeName: 'NotPrimaryNoSecondaryOk' });
    if (name === 'getMore') return this.getMore(command);
    const stage = name === 'aggregate' ? ((command.pipeline as Document[])[0]?.$changeStream as Document | undefined) : undefined;
    if (stage) {
      const id = this.nextCursor++;
      const cursor = new ChangeCursor(id, command.$db as string, target, stage, this.history, (db, coll) => this.collection(db, coll, false));
      this.cursors.set(id, { cursor, socket });
      return { cursor: cursor.first(), ok: 1 };
    }
    const key = RETRYABLE.has(name) ? retryKey(command) : undefined;
    if (key && this.retried.has(key)) return { ...this.retried.get(key)! };
    const reply = runCrud(name, command, this);
    if (!reply) throw new CommandError(59, `no such command: '${name}' (wire stand-in)`, { codeName: 'CommandNotFound' });
    reply.ok = 1;
    if (key) this.retried.set(key, { ...reply });
    return reply;
  }

  private async getMore(command: Document): Promise<Document> {
    const id = Number(command.getMore);
    const entry = this.cursors.get(id);
    if (!entry || entry.cursor.closed) throw new CommandError(43, `cursor id ${id} not found (wire stand-in)`, { codeName: 'CursorNotFound' });
    const injected = this.faults.getMoreError(entry.cursor.coll);
    if (injected) throw new CommandError(injected.code as number, injected.errmsg as string, { errorLabels: injected.errorLabels });
    const cursor = await entry.cursor.more(typeof command.maxTimeMS === 'number' ? command.maxTimeMS : 1000);
    if (!this.primary) {
      this.cursors.delete(id);
      throw new CommandError(11602, 'operation was interrupted because of a replica set state change (wire stand-in)', { codeName: 'InterruptedDueToReplStateChange', errorLabels: ['ResumableChangeStreamError'] });
    }
    if (entry.cursor.closed) this.cursors.delete(id);
    return { cursor, ok: 1 };
  }
}

/** A retried write names the same session and transaction number as its first attempt. */
function retryKey(command: Document): string | undefined {
  const lsid = (command.lsid as { id?: Binary } | undefined)?.id;
  if (command.txnNumber === undefined || !(lsid instanceof Binary)) return undefined;
  return `${Buffer.from(lsid.buffer).toString('hex')}:${String(command.txnNumber)}`;
}
