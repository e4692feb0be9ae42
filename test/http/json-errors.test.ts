import { describe, expect, it } from 'vitest';
import { malformedJson, syntaxErrorAt } from '../../plugins/http/body-parser.js';
import { startApp } from '../helpers/app.js';

/**
 * Issue #34 item 5: a JSON syntax error in a request body is answered with its line and
 * column, said once (V8 words the place differently per Node major: "at position 15 (line 2
 * column 6)" on 22+, nothing at all for an unexpected token), and never quotes the body.
 */
describe('malformed JSON bodies', () => {
  it('name the line and column once, on every Node major', async () => {
    const app = await startApp({ streams: { books: { fields: { id: 'integer', title: 'string' } } } });
    try {
      const res = await app.request('POST', '/api/streams/books/entries', '{"title":\n "x",, }', { 'content-type': 'application/json' });
      expect(res.status).toBe(400);
      const message = res.json.errors[0].message as string;
      expect(message).toMatch(/^Malformed JSON body at line 2, column 6: [^()]+\.$/);
      expect(message).not.toMatch(/position/);
    } finally {
      await app.close();
    }
  });

  it('finds the place even where V8 does not say it, without quoting the body', () => {
    const text = '{"secret": "hunter2", "a": tru}';
    let error: Error | undefined;
    try {
      JSON.parse(text);
    } catch (e) {
      error = e as Error;
    }
    const message = malformedJson(text, error!);
    expect(message).toMatch(/^Malformed JSON body at line 1, column 31: /);
    expect(message).not.toContain('hunter2');
  });

  it('agrees with JSON.parse on what is valid, over many mutated documents', () => {
    const seeds = ['{"a":[1,2.5e-3,{"b":null}],"c":"x\\u00e9\\n","d":true,"e":false}', '[]', '{}', '-0', '"s"', '[1,[2,[3]]]'];
    const alphabet = '{}[]",:0123456789.eE+-tfnrule \n\\ux';
    let seed = 7;
    const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    for (let round = 0; round < 4000; round++) {
      const base = seeds[random(seeds.length)]!;
      const at = random(base.length + 1);
      const text = random(3) === 0 ? base.slice(0, at) + base.slice(at + 1) : base.slice(0, at) + alphabet[random(alphabet.length)] + base.slice(at);
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      expect(syntaxErrorAt(text) === -1, text).toBe(valid);
    }
  });
});
