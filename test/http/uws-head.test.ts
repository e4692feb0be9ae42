import { describe, expect, it } from 'vitest';
import { REQUEST_ID_PREFIX } from '../../plugins/http/request.js';
import { freezeReply, memoOf } from '../../plugins/http/frozen-reply.js';
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

  it('knows a frozen header list by identity, and still tells a new one or a new body apart', () => {
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

  it("keeps a frozen reply's head in the reply's memo, and a spread copy of it gets no memo of its own", () => {
    const heads = new ReplyHeadBytes();
    const reply = freezeReply({ status: 200, headers: [['ETag', '"m"']] as Array<[string, string]>, body: Buffer.from('{"m":1}') });
    const memo = memoOf(reply)!;
    expect(memo).toEqual({});
    expect(text(heads.value(200, 1, reply.body, reply.headers, TYPE, memo))).toBe(`${LEAD}1\r\nETag: "m"\r\nContent-Type: ${TYPE}`);
    expect(memo.uwsHead).toBeDefined();
    expect(text(heads.value(200, 22, reply.body, reply.headers, TYPE, memo))).toBe(`${LEAD}22\r\nETag: "m"\r\nContent-Type: ${TYPE}`);
    // The same body without the memo (another reply) is laid out apart, from the same bytes.
    expect(text(heads.value(200, 3, reply.body, [['ETag', '"other"']], TYPE))).toBe(`${LEAD}3\r\nETag: "other"\r\nContent-Type: ${TYPE}`);
    expect(text(heads.value(200, 4, reply.body, reply.headers, TYPE, memo))).toBe(`${LEAD}4\r\nETag: "m"\r\nContent-Type: ${TYPE}`);
    // Hidden from what reads the reply, and not carried by a copy that may differ from it.
    expect(Object.keys(reply)).toEqual(['status', 'headers', 'body']);
    expect(JSON.stringify({ ...reply, body: undefined })).toBe('{"status":200,"headers":[["ETag","\\"m\\""]]}');
    expect(memoOf({ ...reply })).toBeUndefined();
    expect(memoOf({ status: 200 })).toBeUndefined();
    // Freezing again keeps the one memo.
    expect(memoOf(freezeReply(reply))).toBe(memo);
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
