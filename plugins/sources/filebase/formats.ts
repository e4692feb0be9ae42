import type matterFn from 'gray-matter';
import type * as YamlModule from 'yaml';
import { lazyRequire } from '../../../kernel/index.js';
import type { Entry } from '../contracts.js';

// The YAML and front-matter libraries load with the first stream in those formats: a boot that
// reads only JSON never pays for them (about 40 ms of module loading).
const yaml = lazyRequire<typeof YamlModule>('yaml');
const matterModule = lazyRequire<typeof matterFn>('gray-matter');
const YAML = {
  parse: (text: string): unknown => yaml().parse(text),
  stringify: (value: unknown): string => yaml().stringify(value),
};
const matter = (text: string, options: object): { data: unknown; content: string } => matterModule()(text, options as never);

/** How one filebase format turns a file into an entry and back. */
export interface EntryCodec {
  /** File extensions read (the first one is written). */
  extensions: string[];
  parse(text: string): Entry;
  stringify(entry: Entry): string;
}

function asObject(value: unknown, what: string): Entry {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not an object`);
  return value as Entry;
}

// gray-matter parses YAML with js-yaml (timestamps become Date objects) and caches every
// input it sees when called without options; use the `yaml` package and pass options.
const matterOptions = { engines: { yaml: { parse: (s: string): object => (YAML.parse(s) as object | null) ?? {} } } };

/** YAML front matter plus one field (`body` or `template`) as the content. */
function frontMatter(extensions: string[], contentField: string): EntryCodec {
  return {
    extensions,
    parse(text) {
      const parsed = matter(text, matterOptions);
      const data = asObject(parsed.data ?? {}, 'front matter');
      return { ...data, [contentField]: parsed.content };
    },
    stringify(entry) {
      const { [contentField]: content, ...rest } = entry;
      const text = content === undefined || content === null ? '' : typeof content === 'string' ? content : JSON.stringify(content);
      return `---\n${YAML.stringify(rest)}---\n${text}`;
    },
  };
}

export const CODECS: Readonly<Record<string, EntryCodec>> = {
  json: {
    extensions: ['json'],
    parse: (text) => asObject(JSON.parse(text), 'JSON document'),
    stringify: (entry) => `${JSON.stringify(entry, null, 2)}\n`,
  },
  yaml: {
    extensions: ['yaml', 'yml'],
    parse: (text) => asObject(YAML.parse(text), 'YAML document'),
    stringify: (entry) => YAML.stringify(entry),
  },
  md: frontMatter(['md'], 'body'),
  html: frontMatter(['html'], 'body'),
  tpl: frontMatter(['tpl'], 'template'),
};
