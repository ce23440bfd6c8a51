/**
 * Pre-signed storage URLs in the shape of S3's query-string authentication. The signature covers
 * the decoded object key, so a client that re-encodes the path differently still gets through,
 * while changing the key, the date or the lifetime breaks the signature.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type SignatureCheck = 'valid' | 'missing' | 'mismatch' | 'expired';

function amzDate(date: Date): string {
  return `${date.toISOString().replace(/[-:]/g, '').slice(0, 15)}Z`;
}

function parseAmzDate(value: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

export class UrlSigner {
  private readonly secret = randomBytes(32);

  constructor(
    private readonly ttlSeconds: number,
    private readonly now: () => Date,
  ) {
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) {
      throw new TypeError('downloadUrlTtlSeconds must be a positive integer');
    }
  }

  private signature(objectKey: string, date: string, expires: string): string {
    return createHmac('sha256', this.secret).update(`${objectKey}\n${date}\n${expires}`).digest('hex');
  }

  /** Query string (without `?`) that authorises a GET of `objectKey` for the TTL. */
  sign(objectKey: string): string {
    const date = amzDate(this.now());
    const expires = String(this.ttlSeconds);
    const query = new URLSearchParams({
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Date': date,
      'X-Amz-Expires': expires,
      'X-Amz-SignedHeaders': 'host',
      'X-Amz-Signature': this.signature(objectKey, date, expires),
    });
    return query.toString();
  }

  verify(objectKey: string, query: URLSearchParams): SignatureCheck {
    const date = query.get('X-Amz-Date');
    const expires = query.get('X-Amz-Expires');
    const given = query.get('X-Amz-Signature');
    if (!date || !expires || !given) return 'missing';
    const expected = Buffer.from(this.signature(objectKey, date, expires));
    const actual = Buffer.from(given);
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return 'mismatch';
    const signedAt = parseAmzDate(date);
    if (signedAt === undefined) return 'mismatch';
    return this.now().getTime() > signedAt + Number(expires) * 1000 ? 'expired' : 'valid';
  }
}
