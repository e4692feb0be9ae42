// @ts-check
/**
 * The API as the control panel calls it: the interface prefix from the page's config, the
 * envelope unpacked, a token (from the sign-in form, kept in sessionStorage only) sent as a
 * bearer header, and a 401 announced once so the app can show the sign-in form.
 */

/** @typedef {{ message: string, meta?: Record<string, unknown> }} ErrorElement */
/** @typedef {{ status: number, data: any, meta: Record<string, any>, links: Record<string, any>, errors: ErrorElement[], etag: string | null }} Answer */

const configElement = document.getElementById('panel-config');
/** @type {{ base: string, api: string }} */
export const CONFIG = JSON.parse(configElement?.textContent ?? '{"base":"","api":"/api"}');

const TOKEN_KEY = 'streams-control-panel-token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** @param {string | null} value */
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** Headers every call sends. @param {Record<string, string>} [extra] */
export function headers(extra = {}) {
  /** @type {Record<string, string>} */
  const out = { accept: 'application/json', ...extra };
  const t = token();
  if (t) out.authorization = `Bearer ${t}`;
  return out;
}

/** A non-2xx answer, with the envelope's errors. */
export class ApiError extends Error {
  /** @param {Answer} answer */
  constructor(answer) {
    super(answer.errors[0]?.message ?? `The server answered ${answer.status}.`);
    this.answer = answer;
    this.status = answer.status;
  }
}

/** Query string of a flat object (undefined values left out). @param {Record<string, string | number | undefined>} params */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.append(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : '';
}

/**
 * One call. Resolves with the unpacked envelope of a 2xx (or 304) answer; rejects with an
 * ApiError otherwise (a 401 also fires `panel:unauthorized`).
 * @param {string} method
 * @param {string} path under the interface (`/streams/books/entries`)
 * @param {{ body?: unknown, headers?: Record<string, string> }} [options]
 * @returns {Promise<Answer>}
 */
export async function call(method, path, options = {}) {
  /** @type {RequestInit} */
  const init = { method, headers: headers(options.headers), cache: 'no-store' };
  if (options.body !== undefined) {
    init.body = JSON.stringify(options.body);
    /** @type {Record<string, string>} */ (init.headers)['content-type'] = 'application/json';
  }
  const response = await fetch(`${CONFIG.api}${path}`, init);
  /** @type {Answer} */
  const answer = { status: response.status, data: null, meta: {}, links: {}, errors: [], etag: response.headers.get('etag') };
  if (response.status !== 204 && response.status !== 304) {
    const text = await response.text();
    try {
      const envelope = JSON.parse(text);
      Object.assign(answer, { data: envelope.data ?? null, meta: envelope.meta ?? {}, links: envelope.links ?? {}, errors: envelope.errors ?? [] });
    } catch {
      answer.errors = [{ message: `The server answered ${response.status} without an API envelope.` }];
    }
  }
  if (response.status === 401) window.dispatchEvent(new CustomEvent('panel:unauthorized', { detail: answer.errors[0]?.message }));
  if (response.status >= 400) throw new ApiError(answer);
  return answer;
}

/**
 * Follow a stream's change feed as Server-Sent Events, read with fetch (EventSource cannot
 * send the bearer token), reconnecting with the last cursor. Returns the function that stops.
 * @param {string} stream
 * @param {(change: { event: string, cursor: string, stream: string, id: unknown, data: any, data_omitted?: boolean }) => void} onChange
 * @param {(connected: boolean) => void} [onState] told when the feed is (re)connected or lost
 */
export function follow(stream, onChange, onState) {
  let stopped = false;
  /** @type {string | undefined} */
  let last;
  /** @type {AbortController | undefined} */
  let controller;
  const run = async () => {
    while (!stopped) {
      controller = new AbortController();
      try {
        /** @type {Record<string, string>} */
        const extra = { accept: 'text/event-stream' };
        if (last) extra['last-event-id'] = last;
        const response = await fetch(`${CONFIG.api}/streams/${encodeURIComponent(stream)}/changes`, { headers: headers(extra), signal: controller.signal, cache: 'no-store' });
        if (!response.ok || !response.body) {
          // A 410 (the history moved on) starts live again; anything else waits before retrying.
          if (response.status === 410) last = undefined;
          await new Promise((r) => setTimeout(r, response.status === 410 ? 0 : 3000));
          continue;
        }
        onState?.(true);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done || stopped) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            /** @type {Record<string, string>} */
            const fields = {};
            for (const line of block.split('\n')) {
              const colon = line.indexOf(':');
              if (colon <= 0) continue;
              fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
            }
            if (fields.id) last = fields.id;
            if (fields.data) onChange({ ...JSON.parse(fields.data), event: fields.event ?? 'message', cursor: fields.id ?? '' });
          }
        }
      } catch {
        if (stopped) return;
        onState?.(false);
        await new Promise((r) => setTimeout(r, 2000));
      }
      onState?.(false);
    }
  };
  void run();
  return () => {
    stopped = true;
    controller?.abort();
  };
}
