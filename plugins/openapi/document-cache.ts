import { hash, randomUUID } from 'node:crypto';
import { ByteBudgetMap } from '../../kernel/index.js';
import type { StreamDefinition } from '../streams/index.js';

/**
 * Byte budget of the serialized documents (about 2× a document per interface: its template and
 * the last body assembled from it). 300 streams make a 4.5 MB document; a document larger than
 * the budget is not kept (built per request, as before this cache), never grows memory.
 */
export const DOCUMENT_CACHE_BYTES = 64 * 1024 * 1024;

/** An answer: the body bytes and their strong validator. */
export interface DocumentBody {
  body: Buffer;
  etag: string;
}

/**
 * One interface's document, serialized once with a placeholder where the base URL goes
 * (`servers[0].url`, its only per-request part), split around it.
 */
interface Template {
  /** The definitions it was built from, element by element (a change makes it stale). */
  definitions: readonly StreamDefinition[];
  head: Buffer;
  tail: Buffer;
  /** sha1 of head and tail: the ETag of a base is derived from it, never by hashing megabytes. */
  digest: string;
  /** The last base served and its body: with `http.base_url` set (or one Host) nothing is copied. */
  last: { base: string; answer: DocumentBody } | null;
}

/**
 * The documents of `/openapi.json`, cached by what they depend on. A document is a function
 * of the interface (its name, prefix, resources and middleware all come from the config, never
 * from the request or its identity: the gate and the interface middleware run before this
 * endpoint and decide whether it is answered at all, not what it says), of the stream
 * definitions, and of the base URL. So one template per interface, rebuilt when a definition
 * changes; the base URL is spliced in per request (a copy of the bytes, about 1 ms for 4.5 MB)
 * instead of building and serializing the whole document for every new `Host` (150–200 ms
 * with 300 streams: 200 Hosts took over 20 s). Hosts never add entries: memory does not grow
 * with the Hosts a client invents.
 */
export class DocumentCache {
  private readonly templates: ByteBudgetMap<string, Template>;
  /** Unguessable, so no definition or config text can contain it and move the splice. */
  private readonly placeholder = `base-url-${randomUUID()}`;

  constructor(budgetBytes = DOCUMENT_CACHE_BYTES) {
    this.templates = new ByteBudgetMap(budgetBytes);
  }

  clear(): void {
    this.templates.clear();
  }

  /** Bytes held now (for tests). */
  get bytes(): number {
    return this.templates.bytes;
  }

  /**
   * The document of `interfaceName` at `base`. `build(url)` makes the document object with
   * `url` as its server URL; it runs only when no template of the current `definitions` is kept.
   */
  get(interfaceName: string, base: string, definitions: readonly StreamDefinition[], build: (serverUrl: string) => object): DocumentBody {
    let template = this.templates.get(interfaceName);
    if (template === undefined || !sameList(template.definitions, definitions)) {
      template = this.templateOf(definitions, build);
      // Held: head, tail and one assembled body of the same size.
      this.templates.set(interfaceName, template, 2 * (template.head.length + template.tail.length));
    }
    const last = template.last;
    if (last !== null && last.base === base) return last.answer;
    const answer = assemble(template, base);
    template.last = { base, answer };
    return answer;
  }

  private templateOf(definitions: readonly StreamDefinition[], build: (serverUrl: string) => object): Template {
    const text = JSON.stringify(build(this.placeholder));
    const marker = JSON.stringify(this.placeholder);
    const at = text.indexOf(marker);
    if (at < 0) throw new Error('the OpenAPI document has no server URL to fill in');
    const head = Buffer.from(text.slice(0, at));
    const tail = Buffer.from(text.slice(at + marker.length));
    return { definitions: [...definitions], head, tail, digest: hash('sha1', Buffer.concat([head, tail]), 'base64url'), last: null };
  }
}

function assemble(template: Template, base: string): DocumentBody {
  const url = Buffer.from(JSON.stringify(base));
  // The body is a function of the template and the base: hashing both names it exactly.
  const etag = `"${hash('sha1', `${template.digest}\u0000${base}`, 'base64url')}"`;
  return { body: Buffer.concat([template.head, url, template.tail]), etag };
}

function sameList(a: readonly StreamDefinition[], b: readonly StreamDefinition[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
