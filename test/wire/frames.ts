/**
 * The MongoDB wire protocol frames the wire-level stand-in speaks (the driver's side of the
 * socket is the real `mongodb` driver): OP_MSG (2013) for every command, OP_QUERY (2004) for
 * the legacy `isMaster`/`hello` a driver may open a connection with, answered by OP_REPLY (1).
 * Only what a driver sends: no compression (never advertised), checksums skipped when present.
 */
import { BSON, type Document } from 'bson';

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_MSG = 2013;

const CHECKSUM_PRESENT = 1 << 0;
/** The client expects no reply (unacknowledged writes). */
export const MORE_TO_COME = 1 << 1;

export interface Request {
  requestId: number;
  opCode: number;
  /** The command: OP_MSG body with its document sequences merged in, or the OP_QUERY query. */
  command: Document;
  /** OP_MSG flags (MORE_TO_COME: no reply wanted). */
  flags: number;
}

const deserialize = (bytes: Buffer): Document => BSON.deserialize(bytes, { promoteValues: true, promoteLongs: true });

/** Read one whole message from the front of `buffer`, if it is all there. */
export function takeMessage(buffer: Buffer): { message: Buffer; rest: Buffer } | undefined {
  if (buffer.length < 4) return undefined;
  const length = buffer.readInt32LE(0);
  if (length < 16 || length > 48_000_000) throw new Error(`wire stand-in: bad message length ${length}`);
  if (buffer.length < length) return undefined;
  return { message: buffer.subarray(0, length), rest: buffer.subarray(length) };
}

export function parseMessage(message: Buffer): Request {
  const requestId = message.readInt32LE(4);
  const opCode = message.readInt32LE(12);
  if (opCode === OP_MSG) {
    const flags = message.readUInt32LE(16);
    const end = flags & CHECKSUM_PRESENT ? message.length - 4 : message.length;
    let at = 20;
    let command: Document | undefined;
    const sequences: Array<[string, Document[]]> = [];
    while (at < end) {
      const kind = message[at]!;
      at += 1;
      if (kind === 0) {
        const size = message.readInt32LE(at);
        command = deserialize(message.subarray(at, at + size));
        at += size;
      } else if (kind === 1) {
        const size = message.readInt32LE(at);
        const sectionEnd = at + size;
        let cursor = at + 4;
        const nameEnd = message.indexOf(0, cursor);
        const name = message.toString('utf8', cursor, nameEnd);
        cursor = nameEnd + 1;
        const documents: Document[] = [];
        while (cursor < sectionEnd) {
          const docSize = message.readInt32LE(cursor);
          documents.push(deserialize(message.subarray(cursor, cursor + docSize)));
          cursor += docSize;
        }
        sequences.push([name, documents]);
        at = sectionEnd;
      } else {
        throw new Error(`wire stand-in: unknown OP_MSG section kind ${kind}`);
      }
    }
    if (!command) throw new Error('wire stand-in: OP_MSG without a body');
    for (const [name, documents] of sequences) command[name] = documents;
    return { requestId, opCode, command, flags };
  }
  if (opCode === OP_QUERY) {
    let at = 20; // header + flags
    const nameEnd = message.indexOf(0, at);
    const collection = message.toString('utf8', at, nameEnd);
    at = nameEnd + 1 + 8; // numberToSkip, numberToReturn
    const size = message.readInt32LE(at);
    const command = deserialize(message.subarray(at, at + size));
    // Legacy commands may wrap the command in `$query`.
    const body = (command.$query as Document | undefined) ?? command;
    body.$db ??= collection.split('.')[0];
    return { requestId, opCode, command: body, flags: 0 };
  }
  throw new Error(`wire stand-in: unsupported opCode ${opCode}`);
}

let nextId = 1;

function header(length: number, responseTo: number, opCode: number): Buffer {
  const head = Buffer.alloc(16);
  head.writeInt32LE(length, 0);
  head.writeInt32LE(nextId++, 4);
  head.writeInt32LE(responseTo, 8);
  head.writeInt32LE(opCode, 12);
  return head;
}

/** The reply to `request` in the frame it expects. */
export function replyFrame(request: Request, reply: Document): Buffer {
  const body = Buffer.from(BSON.serialize(reply));
  if (request.opCode === OP_QUERY) {
    const fixed = Buffer.alloc(20); // responseFlags, cursorID (8), startingFrom, numberReturned
    fixed.writeInt32LE(1, 16);
    return Buffer.concat([header(16 + 20 + body.length, request.requestId, OP_REPLY), fixed, body]);
  }
  const flagsAndKind = Buffer.alloc(5); // flagBits 0, section kind 0
  return Buffer.concat([header(16 + 5 + body.length, request.requestId, OP_MSG), flagsAndKind, body]);
}
