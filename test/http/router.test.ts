import { describe, expect, it } from 'vitest';
import { pathHash, Router } from '../../plugins/http/router.js';

/** The shared router (transport top level and API endpoints): what a path matches, with which parameters. */
describe('Router', () => {
  const router = new Router<string>();
  router.add('GET', '/streams', 'index');
  router.add('GET', '/streams/:stream', 'show');
  router.add(['PUT', 'PATCH'], '/streams/:stream', 'update');
  router.add('GET', '/streams/:stream/entries', 'entries');
  router.add('GET', '/streams/:stream/entries/:entry', 'entry');
  router.add('GET', '/streams/special/entries/:entry', 'special');
  router.add('*', '/files/*', 'files');

  it('matches exact paths, then patterns by their segment count, then prefixes', () => {
    expect(router.match('GET', '/streams')?.value).toBe('index');
    expect(router.match('GET', '/streams/planets')).toMatchObject({ value: 'show', params: { stream: 'planets' } });
    expect(router.match('GET', '/streams/planets/entries')).toMatchObject({ value: 'entries', params: { stream: 'planets' } });
    expect(router.match('GET', '/streams/planets/entries/7')).toMatchObject({ value: 'entry', params: { stream: 'planets', entry: '7' } });
    expect(router.match('DELETE', '/files/a/b/c')?.value).toBe('files');
    expect(router.match('GET', '/files')?.value).toBe('files');
  });

  it('prefers a literal segment over a parameter at the same place', () => {
    expect(router.match('GET', '/streams/special/entries/1')).toMatchObject({ value: 'special', params: { entry: '1' } });
  });

  it('answers undefined for paths no route has, and no handler (with Allow) for other methods', () => {
    expect(router.match('GET', '/streams/planets/entries/7/more')).toBeUndefined();
    expect(router.match('GET', '/nothing')).toBeUndefined();
    expect(router.match('GET', '/')).toBeUndefined();
    // An empty segment is no parameter value.
    expect(router.match('GET', '/streams//entries')).toBeUndefined();
    expect(router.match('GET', '/streams/planets/entries/')).toBeUndefined();
    const other = router.match('POST', '/streams/planets');
    expect(other?.value).toBeUndefined();
    expect(other?.allow).toEqual(expect.arrayContaining(['GET', 'HEAD', 'PUT', 'PATCH', 'OPTIONS']));
    // HEAD is served by GET.
    expect(router.match('HEAD', '/streams/planets')?.value).toBe('show');
  });

  it('decodes parameters with the given function, and only parameters', () => {
    const match = router.match('GET', '/streams/pla%20nets/entries/a%2Fb', decodeURIComponent);
    expect(match?.params).toEqual({ stream: 'pla nets', entry: 'a/b' });
    expect(() => router.match('GET', '/streams/%E0%A4%A/entries', decodeURIComponent)).toThrow(URIError);
  });

  it('matches the part of a path below a prefix, from an index, as the cut-out path would', () => {
    const prefix = '/api/v2';
    for (const path of ['/streams', '/streams/planets', '/streams/planets/entries/7', '/streams/special/entries/1', '/files/a', '/nothing', '/streams//entries']) {
      const from = router.match('GET', `${prefix}${path}`, decodeURIComponent, prefix.length);
      expect(from).toEqual(router.match('GET', path, decodeURIComponent));
    }
  });

  it('keeps working for long paths and for routes added after a match', () => {
    expect(router.match('GET', `/streams${'/x'.repeat(10_000)}`)).toBeUndefined();
    router.add('GET', '/a/:b/c/:d/e/:f/g', 'deep');
    expect(router.match('GET', '/a/1/c/2/e/3/g')).toMatchObject({ value: 'deep', params: { b: '1', d: '2', f: '3' } });
    router.add('GET', '/a/b/c/d/e/f/g/h', 'long exact');
    expect(router.match('GET', '/a/b/c/d/e/f/g/h')?.value).toBe('long exact');
    // More segments than the router first kept room for.
    const many = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? `s${i}` : `:p${i}`)).join('/');
    router.add('GET', `/${many}`, 'many');
    const path = `/${Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? `s${i}` : `v${i}`)).join('/')}`;
    expect(router.match('GET', path)).toMatchObject({ value: 'many', params: { p1: 'v1', p39: 'v39' } });
    expect(router.match('GET', `${path}/more`)).toBeUndefined();
    // A parameter that fails to decode leaves the router as it was.
    expect(() => router.match('GET', '/a/%E0%A4%A/c/2/e/3/g', decodeURIComponent)).toThrow(URIError);
    expect(router.match('GET', '/a/1/c/2/e/3/g')).toMatchObject({ value: 'deep', params: { b: '1', d: '2', f: '3' } });
  });
});

describe('remembered matches (issue #33)', () => {
  it('answers a path matched before with the same frozen match, each method with its own handler', () => {
    const router = new Router<string>();
    router.add('GET', '/streams/:stream/entries/:entry', 'show');
    router.add('PATCH', '/streams/:stream/entries/:entry', 'patch');
    const first = router.match('GET', '/streams/planets/entries/7')!;
    expect(router.match('GET', '/streams/planets/entries/7')).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.params)).toBe(true);
    expect(() => {
      (first.params as Record<string, string>).entry = '8';
    }).toThrow(TypeError);
    expect(router.match('PATCH', '/streams/planets/entries/7')).toMatchObject({ value: 'patch', params: { stream: 'planets', entry: '7' } });
    expect(router.match('DELETE', '/streams/planets/entries/7')).toMatchObject({ value: undefined, allow: expect.arrayContaining(['GET', 'PATCH']) });
    expect(router.match('GET', '/streams/planets/entries/7')).toMatchObject({ value: 'show', params: { entry: '7' } });
  });

  it('keeps nothing per path for a path only a prefix route can take, and still lets exact routes and patterns win', () => {
    const router = new Router<string>();
    router.add('*', '/api/*', 'api');
    router.add('GET', '/healthz', 'health');
    router.add('GET', '/pages/:page', 'page');
    const first = router.match('GET', '/api/streams/items/entries/1')!;
    for (let i = 1; i <= 2000; i++) {
      const match = router.match('GET', `/api/streams/items/entries/${i}`);
      // One answer shared by every such path (frozen, like a remembered one).
      expect(match).toBe(first);
    }
    expect(first).toMatchObject({ value: 'api', params: {}, pattern: '/api/*' });
    expect(Object.isFrozen(first)).toBe(true);
    expect(router.rememberedBytes).toBe(0);
    expect(router.match('HEAD', '/api/x/y/z')).toMatchObject({ value: 'api', pattern: '/api/*' });
    expect(router.match('GET', '/api')?.value).toBe('api');
    expect(router.match('GET', '/healthz')?.value).toBe('health');
    expect(router.match('GET', '/pages/about')).toMatchObject({ value: 'page', params: { page: 'about' } });
    // A route of the same number of segments added later takes its own path; the others stay the prefix's.
    router.add('GET', '/api/streams/items/entries/special', 'special');
    router.add('GET', '/api/:a/x/:c/:d', 'four');
    expect(router.match('GET', '/api/streams/items/entries/special')?.value).toBe('special');
    expect(router.match('GET', '/api/streams/items/entries/1')?.value).toBe('api');
    expect(router.match('GET', '/api/w/x/y/z')).toMatchObject({ value: 'four', params: { a: 'w', c: 'y', d: 'z' } });
  });

  it('gives each path its own parameter values, however many and however long', () => {
    const router = new Router<string>();
    router.add('GET', '/streams/:stream/entries/:entry', 'show');
    const long = 'l'.repeat(100);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 600; i++) {
        const stream = i % 3 === 0 ? `${long}${i % 7}` : `s${i % 300}`;
        expect(router.match('GET', `/streams/${stream}/entries/${i}`)?.params).toEqual({ stream, entry: String(i) });
      }
    }
  });

  it('forgets what it remembered when a route is added', () => {
    const router = new Router<string>();
    router.add('GET', '/streams/:stream', 'show');
    expect(router.match('GET', '/streams/special')?.value).toBe('show');
    router.add('GET', '/streams/special', 'special');
    expect(router.match('GET', '/streams/special')).toMatchObject({ value: 'special', params: {} });
  });

  it('remembers per decoding and per starting index, and never a path that failed to decode', () => {
    const router = new Router<string>();
    router.add('GET', '/things/:id', 'thing');
    expect(router.match('GET', '/things/a%20b', decodeURIComponent)?.params).toEqual({ id: 'a b' });
    expect(router.match('GET', '/things/a%20b', (raw) => raw)?.params).toEqual({ id: 'a%20b' });
    expect(router.match('GET', '/api/things/x', decodeURIComponent, 4)?.params).toEqual({ id: 'x' });
    expect(router.match('GET', '/api/things/x', decodeURIComponent)).toBeUndefined();
    for (let i = 0; i < 2; i++) expect(() => router.match('GET', '/things/%E0%A4%A', decodeURIComponent)).toThrow(URIError);
  });

  it('tells apart two paths of one hash: each gets its own match, whichever was remembered', () => {
    // The first two paths of one 30-bit hash (found by trying; about 660,000 paths today).
    const byHash = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let n = 0; pair === undefined && n < 5_000_000; n++) {
      const path = `/items/${n}`;
      const other = byHash.get(pathHash(path));
      if (other !== undefined) pair = [other, path];
      else byHash.set(pathHash(path), path);
    }
    expect(pair).toBeDefined();
    const [one, two] = pair!;
    expect(pathHash(one)).toBe(pathHash(two));
    const router = new Router<string>();
    router.add('GET', '/items/:id', 'item');
    for (let i = 0; i < 3; i++) {
      expect(router.match('GET', one)?.params).toEqual({ id: one.slice(7) });
      expect(router.match('GET', two)?.params).toEqual({ id: two.slice(7) });
    }
    // One slot for the two: the one asked last holds it, and the other is found again.
    const first = router.match('GET', one);
    expect(router.match('GET', one)).toBe(first);
    expect(router.match('GET', two)).toBe(router.match('GET', two));
    expect(router.match('GET', one)).not.toBe(first);
  });

  it('keeps its memory within a byte budget, however many paths are asked', () => {
    const router = new Router<string>();
    router.add('GET', '/things/:id', 'thing');
    const long = 'x'.repeat(2000);
    for (let i = 0; i < 5000; i++) expect(router.match('GET', `/things/${long}${i}`)?.value).toBe('thing');
    expect(router.rememberedBytes).toBeGreaterThan(0);
    expect(router.rememberedBytes).toBeLessThanOrEqual(1024 * 1024);
    expect(router.match('GET', '/things/1')?.params).toEqual({ id: '1' });
  });
});

describe('route parameters', () => {
  it('have nothing to reach through a prototype: no __proto__ accessor, no constructor, no Object methods', () => {
    const router = new Router<string>();
    router.add('GET', '/things/:id/:name', 'thing');
    const params = router.match('GET', '/things/__proto__/constructor')!.params;
    expect(params).toEqual({ id: '__proto__', name: 'constructor' });
    expect(Object.keys(params)).toEqual(['id', 'name']);
    const other = router.match('GET', '/things/1/x')!.params as Record<string, unknown>;
    for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) expect(other[key]).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
