import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** scrypt cost N = 2^15, r = 8, p = 1 (32 MiB, tens of ms per hash): below OWASP's 2^17 to keep writes fast on small machines; verifyHash reads the cost from each stored string, so raising LN later keeps old hashes valid. */
const LN = 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;
/** Hashes written by the PHP system (bcrypt `$2y$`, argon2) are kept as they are. */
const FOREIGN = /^\$(?:2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}|argon2(?:id|i|d)\$\S+)$/;

function derive(password: string, salt: Buffer, ln: number, r: number, p: number, length: number): Promise<Buffer> {
  const N = 2 ** ln;
  return new Promise((resolve, reject) => {
    scrypt(password, salt, length, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export function isHashed(value: unknown): value is string {
  return typeof value === 'string' && (PHC.test(value) || FOREIGN.test(value));
}

/** `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (PHC string format, unpadded base64). */
export async function hashValue(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, LN, R, P, KEY_LENGTH);
  const b64 = (b: Buffer): string => b.toString('base64').replace(/=+$/, '');
  return `$scrypt$ln=${LN},r=${R},p=${P}$${b64(salt)}$${b64(key)}`;
}

/** Compare a password with a stored scrypt PHC string (false for other or malformed hashes). */
export async function verifyHash(password: string, stored: string): Promise<boolean> {
  const m = PHC.exec(stored);
  if (!m) return false;
  const expected = Buffer.from(m[5]!, 'base64');
  const key = await derive(password, Buffer.from(m[4]!, 'base64'), Number(m[1]), Number(m[2]), Number(m[3]), expected.length);
  return key.length === expected.length && timingSafeEqual(key, expected);
}
