import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The environment variable holding the 32-byte key, base64 or hex. */
export const ENCRYPTION_KEY_ENV = 'STREAMS_ENCRYPTION_KEY';
const PREFIX = 'enc:v1:';

let cachedText: string | undefined;
let cachedKey: Buffer | undefined;

/** The key from the environment; undefined when unset or not 32 bytes. Read on each call (tests set it). */
export function encryptionKey(env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
  const text = env[ENCRYPTION_KEY_ENV]?.trim();
  if (!text) return undefined;
  if (text === cachedText) return cachedKey;
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(text)) key = Buffer.from(text, 'hex');
  else {
    const decoded = Buffer.from(text.replace(/^base64:/, ''), 'base64');
    key = decoded.length === 32 ? decoded : undefined;
  }
  cachedText = text;
  cachedKey = key;
  return key;
}

/** Why the configured key is unusable, or undefined when it is fine. */
export function encryptionKeyProblem(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!env[ENCRYPTION_KEY_ENV]?.trim()) return `no encryption key is configured (set ${ENCRYPTION_KEY_ENV} to 32 bytes, base64 or hex)`;
  if (!encryptionKey(env)) return `${ENCRYPTION_KEY_ENV} is not 32 bytes of base64 or hex`;
  return undefined;
}

/** AES-256-GCM of the value's JSON: `enc:v1:<iv>:<tag>:<ciphertext>` (base64url parts). */
export function encryptValue(value: unknown, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return `${PREFIX}${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${body.toString('base64url')}`;
}

export function isEncrypted(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

/** The original value; throws when the key is wrong or the text was tampered with. */
export function decryptValue(text: string, key: Buffer): unknown {
  const [iv, tag, body] = text.slice(PREFIX.length).split(':');
  if (iv === undefined || tag === undefined || body === undefined) throw new Error('Malformed encrypted value.');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  return JSON.parse(plain);
}
