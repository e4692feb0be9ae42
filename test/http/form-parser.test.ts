import { describe, expect, it } from 'vitest';
import { parseForm } from '../../plugins/http/index.js';

describe('parseForm', () => {
  it('parses flat pairs, + as space and percent-encoding', () => {
    expect({ ...parseForm('a=1&b=hello+world&c=%C3%A9&d') }).toEqual({ a: '1', b: 'hello world', c: 'é', d: '' });
  });

  it('nests brackets and appends with []', () => {
    const parsed = parseForm('where[name]=Luke&where[year][]=1&where[year][]=2&a[b][c]=d');
    expect(JSON.parse(JSON.stringify(parsed))).toEqual({ where: { name: 'Luke', year: ['1', '2'] }, a: { b: { c: 'd' } } });
  });

  it('decodes encoded brackets in keys', () => {
    expect(JSON.parse(JSON.stringify(parseForm('where%5Bname%5D=x')))).toEqual({ where: { name: 'x' } });
  });

  it('creates null-prototype objects only', () => {
    const parsed = parseForm('a[b]=1');
    expect(Object.getPrototypeOf(parsed)).toBeNull();
    expect(Object.getPrototypeOf(parsed.a)).toBeNull();
  });

  it.each(['__proto__[x]=1', 'a[__proto__]=1', 'constructor[prototype][x]=1', 'a[prototype]=1', '%5F%5Fproto%5F%5F=1'])('rejects %s with 400', (text) => {
    expect(() => parseForm(text)).toThrow(expect.objectContaining({ status: 400 }));
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('rejects conflicting shapes, malformed names and encodings', () => {
    for (const text of ['a=1&a[b]=2', 'a[b]=1&a=2', 'a[]=1&a[b]=2', 'a[b=1', 'a=%E0%A4%A', '=1']) {
      expect(() => parseForm(text), text).toThrow(expect.objectContaining({ status: 400 }));
    }
  });

  it('limits nesting depth and the number of pairs', () => {
    expect(() => parseForm(`a${'[x]'.repeat(10)}=1`)).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => parseForm(Array.from({ length: 1001 }, (_, i) => `k${i}=1`).join('&'))).toThrow(expect.objectContaining({ status: 400 }));
  });
});
