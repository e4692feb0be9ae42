import path from 'node:path';
import { defineSettings } from '../../kernel/index.js';

/** An API key: only its SHA-256 digest is configured (inline or from an environment variable). */
export interface ApiKeyConfig {
  id: string;
  sha256?: string;
  sha256_env?: string;
  roles: string[];
}

/** The `access` section (docs/configuration.md, "access"; docs/access.md). Its presence turns the plugin on. */
export interface AccessSettings {
  jwks_file?: string;
  jwks_url?: string;
  secret_env?: string;
  algorithms: string[];
  issuer?: string;
  audience?: string | string[];
  clock_skew_seconds: number;
  roles_claim: string;
  keys: ApiKeyConfig[];
  anonymous_role: string;
  admin_roles: string[];
  /** The rule set of streams without an `access` key (absent: such streams are for administrators only). */
  default?: Record<string, unknown>;
  token_cache_bytes: number;
  realm: string;
}

declare module '../../kernel/config-schema.js' {
  interface ConfigSections {
    access: AccessSettings;
  }
}

/** Never `none`: an unsigned token is never an identity. */
export const ALGORITHMS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const ROLE = '^[A-Za-z0-9_.:-]{1,64}$';

export const accessSettings = defineSettings({
  key: 'access',
  schema: {
    type: 'object',
    additionalProperties: false,
    default: {},
    properties: {
      jwks_file: { type: 'string', minLength: 1 },
      jwks_url: { type: 'string', pattern: '^https?://' },
      secret_env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
      algorithms: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ALGORITHMS }, default: ['RS256', 'ES256', 'EdDSA', 'HS256'] },
      issuer: { type: 'string', minLength: 1 },
      audience: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }] },
      clock_skew_seconds: { type: 'integer', minimum: 0, maximum: 3600, default: 30 },
      roles_claim: { type: 'string', pattern: '^[A-Za-z0-9_:/.-]{1,128}$', default: 'roles' },
      keys: {
        type: 'array',
        default: [],
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'roles'],
          properties: {
            id: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
            sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
            sha256_env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
            roles: { type: 'array', items: { type: 'string', pattern: ROLE } },
          },
          oneOf: [{ required: ['sha256'] }, { required: ['sha256_env'] }],
        },
      },
      anonymous_role: { type: 'string', pattern: ROLE, default: 'public' },
      admin_roles: { type: 'array', items: { type: 'string', pattern: ROLE }, default: ['admin'] },
      default: { type: 'object' },
      token_cache_bytes: { type: 'integer', minimum: 0, default: 4 * 1024 * 1024 },
      realm: { type: 'string', pattern: '^[^"\\\\]*$', default: 'streams' },
    },
  },
  resolve(section, { root }) {
    if (section.jwks_file !== undefined) section.jwks_file = path.resolve(root, section.jwks_file);
  },
});
