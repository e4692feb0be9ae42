import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { ConfigError } from '../../kernel/index.js';
import type { AccessSettings } from './settings.js';

/** Why a token was refused, for `error_description` (never the token, never a claim's value). */
export class TokenRefused extends Error {}

/**
 * JWT verification with jose (issue #28). The key follows the token's `alg`, and only from
 * the allow-list: an HMAC token is checked with the secret alone, any other with the JWKS
 * alone, so an HS256 token signed with a public key from the JWKS (key confusion) can never
 * verify, and `none` is never in the list. `iss`/`aud` are checked when configured; `exp`
 * and `nbf` within the clock skew.
 */
export class JwtVerifier {
  private readonly secret: Uint8Array | undefined;
  private readonly jwks: JWTVerifyGetKey | undefined;
  private readonly hmac: string[];
  private readonly asymmetric: string[];

  constructor(
    private readonly settings: AccessSettings,
    where: string,
  ) {
    this.hmac = settings.algorithms.filter((a) => a.startsWith('HS'));
    this.asymmetric = settings.algorithms.filter((a) => !a.startsWith('HS'));
    if (settings.secret_env !== undefined) {
      const secret = process.env[settings.secret_env] ?? '';
      // RFC 7518 3.2: an HMAC key at least as long as the hash (32 bytes for HS256).
      if (Buffer.byteLength(secret) < 32) throw new ConfigError(`$${settings.secret_env} must hold an HMAC secret of at least 32 bytes`, where, '/access/secret_env');
      this.secret = new TextEncoder().encode(secret);
    }
    if (settings.jwks_file !== undefined && settings.jwks_url !== undefined) throw new ConfigError('give jwks_file or jwks_url, not both', where, '/access');
    if (settings.jwks_file !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(readFileSync(settings.jwks_file, 'utf8'));
      } catch (error) {
        throw new ConfigError(`cannot read the JWKS file: ${(error as Error).message}`, where, '/access/jwks_file');
      }
      if (parsed === null || typeof parsed !== 'object' || !Array.isArray((parsed as { keys?: unknown }).keys)) {
        throw new ConfigError('the JWKS file must be a JSON object with a "keys" list', where, '/access/jwks_file');
      }
      // A JWKS holds public keys only: a private or symmetric key there is a mistake to refuse, not serve.
      const keys = (parsed as { keys: Array<Record<string, unknown>> }).keys;
      keys.forEach((k, i) => {
        if (k.kty === 'oct' || k.d !== undefined) throw new ConfigError(`key ${i} is not a public key (symmetric or private keys do not belong in a JWKS)`, where, '/access/jwks_file');
      });
      this.jwks = createLocalJWKSet(parsed as { keys: [] });
    } else if (settings.jwks_url !== undefined) {
      // Cached; an unknown `kid` refetches, at most once a minute (jose's cooldown).
      this.jwks = createRemoteJWKSet(new URL(settings.jwks_url), { cooldownDuration: 60_000, cacheMaxAge: 10 * 60_000, timeoutDuration: 5_000 });
    }
  }

  /** Whether any JWT can verify here (a secret or a key set is configured). */
  get enabled(): boolean {
    return this.secret !== undefined || this.jwks !== undefined;
  }

  async verify(token: string): Promise<JWTPayload> {
    const getKey: JWTVerifyGetKey = async (header, input) => {
      const alg = header.alg ?? '';
      if (alg.startsWith('HS')) {
        if (this.secret === undefined || !this.hmac.includes(alg)) throw new TokenRefused('The token is signed with an algorithm not accepted here.');
        return this.secret;
      }
      if (this.jwks === undefined || !this.asymmetric.includes(alg)) throw new TokenRefused('The token is signed with an algorithm not accepted here.');
      return this.jwks(header, input);
    };
    try {
      const { payload } = await jwtVerify(token, getKey, {
        algorithms: this.settings.algorithms,
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        clockTolerance: this.settings.clock_skew_seconds,
      });
      return payload;
    } catch (error) {
      throw new TokenRefused(describe(error));
    }
  }
}

/** A description of a refusal that names no value the client sent. */
function describe(error: unknown): string {
  if (error instanceof TokenRefused) return error.message;
  if (error instanceof errors.JWTExpired) return 'The token has expired.';
  if (error instanceof errors.JWTClaimValidationFailed) {
    const claim = ['iss', 'aud', 'nbf', 'exp', 'iat', 'sub'].includes(error.claim) ? error.claim : 'a';
    return claim === 'nbf' ? 'The token is not valid yet.' : `The token's ${claim} claim is not accepted.`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) return 'No key here verifies the token.';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'The token is signed with an algorithm not accepted here.';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'The token signature does not verify.';
  return 'The token is invalid.';
}
