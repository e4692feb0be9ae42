/** Status lines for `res.writeStatus`, precomputed once (uWS wants "200 OK", not a number). */
const TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 206: 'Partial Content',
  301: 'Moved Permanently', 302: 'Found', 303: 'See Other', 304: 'Not Modified', 307: 'Temporary Redirect', 308: 'Permanent Redirect',
  400: 'Bad Request', 401: 'Unauthorized', 402: 'Payment Required', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 408: 'Request Timeout', 409: 'Conflict', 410: 'Gone', 411: 'Length Required', 412: 'Precondition Failed',
  413: 'Payload Too Large', 414: 'URI Too Long', 415: 'Unsupported Media Type', 416: 'Range Not Satisfiable', 418: "I'm a teapot",
  422: 'Unprocessable Entity', 423: 'Locked', 425: 'Too Early', 428: 'Precondition Required', 429: 'Too Many Requests',
  431: 'Request Header Fields Too Large', 451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

const LINES = new Map<number, string>();
/**
 * The reason phrases by status, as an array: `TEXT`'s integer keys from 200 to 504 are sparse,
 * so V8 keeps them in a dictionary, and its lookup was ~60 ns of every node:http answer
 * (issue #33); a packed array's is an indexed load.
 */
const TEXTS: Array<string | undefined> = new Array<string | undefined>(600).fill(undefined);
for (const [code, text] of Object.entries(TEXT)) {
  LINES.set(Number(code), `${code} ${text}`);
  TEXTS[Number(code)] = text;
}

export function statusText(status: number): string {
  return TEXTS[status] ?? 'Unknown';
}

export function statusLine(status: number): string {
  return LINES.get(status) ?? `${status} ${status < 400 ? 'OK' : 'Error'}`;
}
