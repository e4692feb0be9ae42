import { hash } from 'node:crypto';
import { AppError, ByteBudgetMap, type KernelConfig } from '../../kernel/index.js';
import type { JWTPayload } from 'jose';
import { findByDigest, keyDigests, sha256, type KeyHolder } from './api-keys.js';
import { CallerAccess, type PolicyContext } from './caller-access.js';
import { JwtVerifier, TokenRefused } from './jwt-verifier.js';
import type { AccessSettings } from './settings.js';

/** Three parts: a compact JWS (jose checks the rest). Anything else presented as a bearer is an API key. */
function isCompactJws(text: string): boolean {
  const first = text.indexOf('.');
  const second = first < 0 ? -1 : text.indexOf('.', first + 1);
  return first > 0 && second > first + 1 && text.indexOf('.', second + 1) < 0;
}
const BEARER = /^Bearer[ \t]+(\S+)\s*$/i;

/** A verified token kept until it expires. */
interface Kept {
  access: CallerAccess;
  /** Milliseconds since the epoch; Infinity for a token without `exp`. */
  until: number;
}

/**
 * Who calls (issue #28): no credentials is the anonymous role; `Authorization: Bearer` holds
 * a JWT (verified with jose) or an API key (or one of the `api.auth` tokens, which stay
 * administrators). A bad one is a 401 that never echoes it. Verified JWTs are kept by the
 * digest of their text until they expire, within a byte budget, so a repeated token costs a
 * hash and a map lookup: the request stays synchronous.
 */
export class Authenticator {
  private readonly anonymous: CallerAccess;
  private readonly keys: Array<KeyHolder<CallerAccess>>;
  private readonly verifier: JwtVerifier;
  private readonly tokens: ByteBudgetMap<string, Kept>;
  private readonly invalid: string;
  /**
   * The last token verified or found, by its exact text: the next request of the same client
   * (the common case: a browser, a service) skips even the SHA-256 of the cache key.
   */
  private last: { token: string; access: CallerAccess; until: number } | undefined;

  constructor(
    private readonly settings: AccessSettings,
    config: KernelConfig,
    private readonly policy: PolicyContext,
    legacyTokens: readonly string[],
  ) {
    const where = config.file ?? 'config';
    this.verifier = new JwtVerifier(settings, where);
    this.tokens = new ByteBudgetMap(settings.token_cache_bytes);
    this.invalid = `Bearer realm="${settings.realm}", error="invalid_token"`;
    this.anonymous = this.caller(null, [settings.anonymous_role], {});
    const admin = settings.admin_roles[0] ?? 'admin';
    this.keys = [
      ...keyDigests(settings.keys, where).map(({ config: key, digest }) => ({ digest, value: this.caller(key.id, key.roles, {}) })),
      // The `api.auth` bearer tokens of before this plugin keep working, as administrators.
      ...legacyTokens.map((token) => {
        const digest = sha256(token);
        return { digest, value: new CallerAccess({ id: `token:${digest.toString('hex').slice(0, 12)}`, roles: [admin], claims: {} }, true, policy) };
      }),
    ];
  }

  private caller(id: string | null, roles: readonly string[], claims: Record<string, unknown>): CallerAccess {
    const admin = roles.some((r) => this.settings.admin_roles.includes(r));
    return new CallerAccess({ id, roles, claims }, admin, this.policy);
  }

  /** The caller of a request's `Authorization` header (undefined: none). A promise only when a token must be verified. */
  identify(header: string | undefined): CallerAccess | Promise<CallerAccess> {
    if (header === undefined || header === '') return this.anonymous;
    // The usual spelling is sliced off without a regex (this runs on every request).
    let credential = header.startsWith('Bearer ') ? header.slice(7) : undefined;
    if (credential === undefined || credential.includes(' ') || credential === '') {
      const match = BEARER.exec(header);
      if (match === null) throw this.refused('The Authorization header must be "Bearer <token>".', 'invalid_request');
      credential = match[1]!;
    }
    if (!isCompactJws(credential) || !this.verifier.enabled) {
      const found = findByDigest(this.keys, sha256(credential));
      if (found === undefined) throw this.refused('The API key is not known.');
      return found;
    }
    const last = this.last;
    if (last !== undefined && last.token === credential && Date.now() < last.until) return last.access;
    // One-shot hashing straight to text: a third of createHash's cost on the hot path.
    const id = hash('sha256', credential, 'base64url');
    const kept = this.tokens.get(id);
    if (kept !== undefined) {
      if (Date.now() < kept.until) {
        this.last = { token: credential, access: kept.access, until: kept.until };
        return kept.access;
      }
      this.tokens.delete(id);
    }
    return this.verify(credential, id);
  }

  private async verify(token: string, id: string): Promise<CallerAccess> {
    let claims: JWTPayload;
    try {
      claims = await this.verifier.verify(token);
    } catch (error) {
      if (error instanceof TokenRefused) throw this.refused(error.message);
      throw error;
    }
    const access = this.caller(typeof claims.sub === 'string' ? claims.sub : null, this.rolesOf(claims), claims as Record<string, unknown>);
    // Kept as long as the verifier would accept it: until exp plus the clock skew.
    const until = typeof claims.exp === 'number' ? (claims.exp + this.settings.clock_skew_seconds) * 1000 : Infinity;
    // What a kept token costs: its claims' text twice (UTF-16) and the records around it.
    this.tokens.set(id, { access, until }, 2 * JSON.stringify(claims).length + 512);
    this.last = { token, access, until };
    return access;
  }

  /** The roles claim (a dotted path: `realm_access.roles`), a string or a list of strings; nothing else counts. */
  private rolesOf(claims: JWTPayload): string[] {
    let value: unknown = claims;
    for (const part of this.settings.roles_claim.split('.')) {
      value = value !== null && typeof value === 'object' && Object.hasOwn(value, part) ? (value as Record<string, unknown>)[part] : undefined;
    }
    if (typeof value === 'string') return [value];
    if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
    return [];
  }

  private refused(description: string, code = 'invalid_token'): AppError {
    const error = new AppError(401, 'Unauthenticated.');
    // The description is ours (no value the client sent); quotes cannot occur in it.
    error.headers = [['WWW-Authenticate', `${this.invalid.replace('invalid_token', code)}, error_description="${description.replace(/["\\]/g, '')}"`]];
    return error;
  }
}
