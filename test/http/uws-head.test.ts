import { describe, expect, it } from 'vitest';
import { REQUEST_ID_PREFIX } from '../../plugins/http/request.js';
import { freezeReply, nodeHeadOf, uwsHeadOf } from '../../plugins/http/frozen-reply.js';
import { ReplyHeadBytes } from '../../plugins/http/uws-head.js';

const TYPE = 'application/json; charset=utf-8';
const text = (bytes: ArrayBuffer | undefined): string | undefined => (bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8'));
/** The head's start as uWS is handed it: the status line, then the request id's header. */
const LEAD = `200 OK\r\nX-Request-Id: ${REQUEST_ID_PREFIX}-`;

/** The head of a uWS reply as bytes (issue #33): the same text the string path writes. */
describe('ReplyHeadBytes', () => {
  it('writes the status line, the request id with its number, then each header and the content type, as the string path would', () => {
    const heads = new ReplyHeadBytes();
    const body = Buffer.from('{}');
    for (const sequence of [1, 9, 10, 99, 100, 12345, 999_999, 1_000_000, 2 ** 31 - 1, 2 ** 31, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER]) {
      const headers: Array<[string, string]> = [['ETag', '"abc"'], ['Cache-Control', 'no-cache']];
      expect(text(heads.value(200, sequence, body, headers, TYPE))).toBe(`${LEAD}${sequence}\r\nETag: "abc"\r\nCache-Control: no-cache\r\nContent-Type: ${TYPE}`);
    }
    expect(text(heads.value(200, 3, Buffer.from('x'), undefined, 'text/plain'))).toBe(`${LEAD}3\r\nContent-Type: text/plain`);
  });

  it('takes new headers, a new type or a header edited in place for a body it has seen, never the old head', () => {
    const heads = new ReplyHeadBytes();
    const body = Buffer.from('{}');
    expect(text(heads.value(200, 1, body, [['ETag', '"one"']], TYPE))).toContain('ETag: "one"');
    expect(text(heads.value(200, 2, body, [['ETag', '"two"']], TYPE))).toContain('ETag: "two"');
    expect(text(heads.value(200, 3, body, [['ETag', '"two"']], 'text/csv'))).toBe(`${LEAD}3\r\nETag: "two"\r\nContent-Type: text/csv`);
    const headers: Array<[string, string]> = [['ETag', '"two"']];
    expect(text(heads.value(200, 4, body, headers, TYPE))).not.toContain('Vary');
    headers.push(['Vary', 'Accept-Encoding']);
    expect(text(heads.value(200, 5, body, headers, TYPE))).toBe(`${LEAD}5\r\nETag: "two"\r\nVary: Accept-Encoding\r\nContent-Type: ${TYPE}`);
    expect(text(heads.value(200, 6, body, [], TYPE))).toBe(`${LEAD}6\r\nContent-Type: ${TYPE}`);
  });

  it('keeps one head per body, and tells another header list or body apart', () => {
    const heads = new ReplyHeadBytes();
    const one = Buffer.from('{"a":1}');
    const two = Buffer.from('{"a":2}');
    const kept = Object.freeze([Object.freeze(['ETag', '"k1"'])]) as Array<[string, string]>;
    const other = Object.freeze([Object.freeze(['ETag', '"k2"'])]) as Array<[string, string]>;
    expect(text(heads.value(200, 8, one, kept, TYPE))).toBe(`${LEAD}8\r\nETag: "k1"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.value(200, 9, two, other, TYPE))).toBe(`${LEAD}9\r\nETag: "k2"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.value(200, 10, one, kept, TYPE))).toBe(`${LEAD}10\r\nETag: "k1"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.value(200, 11, one, other, TYPE))).toBe(`${LEAD}11\r\nETag: "k2"\r\nContent-Type: ${TYPE}`);
    // Fewer digits than the last answer of this body: the id's prefix moves back next to them.
    expect(text(heads.value(200, 7, one, other, TYPE))).toBe(`${LEAD}7\r\nETag: "k2"\r\nContent-Type: ${TYPE}`);
  });

  it("keeps a kept reply's header lines inside it, hidden, and a spread copy of it has none", () => {
    const heads = new ReplyHeadBytes();
    const made = { status: 200, headers: [['ETag', '"m"']] as Array<[string, string]>, body: Buffer.from('{"m":1}') };
    const reply = freezeReply(made);
    expect(reply).not.toBe(made);
    expect(Object.isFrozen(reply) && Object.isFrozen(reply.headers) && Object.isFrozen(reply.headers![0])).toBe(true);
    expect(uwsHeadOf(reply)).toBeNull();
    expect(text(heads.of(reply, reply.body, 1, TYPE))).toBe(`${LEAD}1\r\nETag: "m"\r\nContent-Type: ${TYPE}`);
    expect(Buffer.from(uwsHeadOf(reply)!).toString()).toBe('\r\nETag: "m"');
    expect(text(heads.of(reply, reply.body, 22, TYPE))).toBe(`${LEAD}22\r\nETag: "m"\r\nContent-Type: ${TYPE}`);
    // The same body in another reply (not kept) is laid out apart, from the same bytes.
    expect(text(heads.of({ status: 200, headers: [['ETag', '"other"']], body: reply.body }, reply.body, 3, TYPE))).toBe(`${LEAD}3\r\nETag: "other"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.of(reply, reply.body, 4, TYPE))).toBe(`${LEAD}4\r\nETag: "m"\r\nContent-Type: ${TYPE}`);
    // Hidden from what reads the reply, and not carried by a copy that may differ from it.
    expect(Object.keys(reply)).toEqual(['status', 'headers', 'body']);
    expect(JSON.stringify({ ...reply, body: undefined })).toBe('{"status":200,"headers":[["ETag","\\"m\\""]]}');
    expect(uwsHeadOf({ ...reply })).toBeUndefined();
    expect(nodeHeadOf({ ...reply })).toBeUndefined();
    expect(uwsHeadOf({ status: 200 })).toBeUndefined();
    expect(uwsHeadOf(Object.freeze({ status: 200 }))).toBeUndefined();
    // Freezing again hands back the same kept reply.
    expect(freezeReply(reply)).toBe(reply);
  });

  it('answers kept replies of one status, type and lines length through one shared buffer, each with its own lines and number', () => {
    const heads = new ReplyHeadBytes();
    const kept = (etag: string, status = 200) => freezeReply({ status, headers: [['ETag', etag]] as Array<[string, string]>, body: Buffer.from(etag) });
    const [a, b, c] = [kept('"aaaa"'), kept('"bbbb"'), kept('"cc"')];
    const first = heads.of(a, a.body!, 5, TYPE);
    expect(text(first)).toBe(`${LEAD}5\r\nETag: "aaaa"\r\nContent-Type: ${TYPE}`);
    // Same status, type, length and digits: the same buffer, written again (uWS copies it within its call).
    expect(heads.of(b, b.body!, 6, TYPE)).toBe(first);
    expect(text(first)).toBe(`${LEAD}6\r\nETag: "bbbb"\r\nContent-Type: ${TYPE}`);
    // Another length, digit count, type or status: a buffer of its own; back to the first one after.
    expect(text(heads.of(c, c.body!, 7, TYPE))).toBe(`${LEAD}7\r\nETag: "cc"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.of(a, a.body!, 10, TYPE))).toBe(`${LEAD}10\r\nETag: "aaaa"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.of(a, a.body!, 8, 'text/csv'))).toBe(`${LEAD}8\r\nETag: "aaaa"\r\nContent-Type: text/csv`);
    const missing = kept('"dddd"', 404);
    expect(text(heads.of(missing, missing.body!, 9, TYPE))).toBe(`404 Not Found\r\nX-Request-Id: ${REQUEST_ID_PREFIX}-9\r\nETag: "dddd"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.of(b, b.body!, 1, TYPE))).toBe(`${LEAD}1\r\nETag: "bbbb"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.of(a, a.body!, 2, TYPE))).toBe(`${LEAD}2\r\nETag: "aaaa"\r\nContent-Type: ${TYPE}`);
    // Past the bound on shared buffers (300 lengths of lines, 256 buffers kept), answers stay right.
    for (let n = 0; n < 300; n++) {
      const r = kept(`"${'x'.repeat(n)}"`);
      expect(text(heads.of(r, r.body!, 1000 + n, TYPE))).toBe(`${LEAD}${1000 + n}\r\nETag: "${'x'.repeat(n)}"\r\nContent-Type: ${TYPE}`);
    }
    expect(text(heads.of(a, a.body!, 3, TYPE))).toBe(`${LEAD}3\r\nETag: "aaaa"\r\nContent-Type: ${TYPE}`);
    // A kept reply whose head is too long to keep goes to the string path, every time.
    const long = freezeReply({ status: 200, headers: [['X-Long', 'y'.repeat(4096)]] as Array<[string, string]>, body: Buffer.from('{}') });
    expect(heads.of(long, long.body!, 1, TYPE)).toBeUndefined();
    expect(heads.of(long, long.body!, 2, TYPE)).toBeUndefined();
  });

  it('lays out a new head for another status of the same body', () => {
    const heads = new ReplyHeadBytes();
    const body = Buffer.from('{}');
    expect(text(heads.value(200, 1, body, [['ETag', '"e"']], TYPE))).toBe(`${LEAD}1\r\nETag: "e"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.value(404, 2, body, [['ETag', '"e"']], TYPE))).toBe(`404 Not Found\r\nX-Request-Id: ${REQUEST_ID_PREFIX}-2\r\nETag: "e"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.value(200, 3, body, [['ETag', '"e"']], TYPE))).toBe(`${LEAD}3\r\nETag: "e"\r\nContent-Type: ${TYPE}`);
  });

  it('leaves a head too long to keep to the string path', () => {
    const heads = new ReplyHeadBytes();
    expect(heads.value(200, 1, Buffer.from('{}'), [['X-Long', 'x'.repeat(4096)]], TYPE)).toBeUndefined();
    expect(text(heads.value(200, 2, Buffer.from('{}'), [['X-Short', 'y']], TYPE))).toBe(`${LEAD}2\r\nX-Short: y\r\nContent-Type: ${TYPE}`);
  });
});
