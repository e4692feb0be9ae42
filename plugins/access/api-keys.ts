import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../../kernel/index.js';
import type { ApiKeyConfig } from './settings.js';

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export interface KeyHolder<T> {
  digest: Buffer;
  value: T;
}

/**
 * The configured API keys as digests (the keys themselves are never configured: only
 * `sha256` or an environment variable holding it). A presented key is hashed and compared
 * with every digest in constant time, without an early exit, so timing tells nothing.
 */
export function keyDigests(keys: readonly ApiKeyConfig[], where: string): Array<{ config: ApiKeyConfig; digest: Buffer }> {
  return keys.map((key, index) => {
    const hex = key.sha256 ?? process.env[key.sha256_env ?? ''] ?? '';
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
      throw new ConfigError(`API key "${key.id}": $${key.sha256_env} must hold the key's SHA-256 digest (64 hex digits)`, where, `/access/keys/${index}`);
    }
    return { config: key, digest: Buffer.from(hex, 'hex') };
  });
}

/** The holder whose digest is the presented one's, compared with all of them in constant time. */
export function findByDigest<T>(holders: ReadonlyArray<KeyHolder<T>>, presented: Buffer): T | undefined {
  let found: T | undefined;
  for (const holder of holders) {
    if (timingSafeEqual(presented, holder.digest) && found === undefined) found = holder.value;
  }
  return found;
}
