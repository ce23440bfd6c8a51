/**
 * s3rver 3.7 makes ListObjectsV2's continuation tokens with DES, which the OpenSSL 3 in Node 17+
 * refuses (ERR_OSSL_EVP_UNSUPPORTED): every listing of more than one page (over 1,000 keys) answers
 * 500 InternalError, so a breach reconciliation over 10,000 archived reports could not run locally.
 * This middleware, in front of s3rver's router, gives list-type=2 listings tokens of its own: a
 * token received becomes s3rver's `start-after` (the last key of the page before, which is what
 * s3rver's token held), and a truncated page gets a token naming its last key. Pages, keys and
 * IsTruncated are s3rver's own. S3's tokens are opaque to clients, so nothing relies on the form.
 *
 * s3rver does not check SigV4 signatures (its authentication accepts any V4 request from its
 * account), so rewriting the query before the router leaves the request acceptable.
 */
import { createRequire } from 'node:module';

interface S3ErrorConstructor {
  new (code: string, message: string, detail?: Record<string, string>): Error;
}
const S3Error = createRequire(import.meta.url)('s3rver/lib/models/error.js') as S3ErrorConstructor;

interface ListingResult {
  objects: { key: string }[];
  commonPrefixes: string[];
  isTruncated: boolean;
}
interface ListingStore {
  listObjects(bucket: string, options: Record<string, unknown>): Promise<ListingResult>;
}
interface Context {
  readonly method: string;
  readonly path: string;
  query: Record<string, string | string[] | undefined>;
  store: ListingStore;
  body: unknown;
}
type Middleware = (ctx: Context, next: () => Promise<void>) => Promise<void>;

const TOKEN_TAG = 'local-s3rver-after:';

export function encodeListingToken(lastKey: string): string {
  return Buffer.from(`${TOKEN_TAG}${lastKey}`, 'utf8').toString('base64url');
}

/** The key a token names, or undefined when it is not one of these tokens. */
export function decodeListingToken(token: string): string | undefined {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  return text.startsWith(TOKEN_TAG) ? text.slice(TOKEN_TAG.length) : undefined;
}

/** Installs the middleware just before s3rver's router (the last middleware its constructor adds). */
export function addListingTokens(server: unknown): void {
  const app = server as { middleware: Middleware[] };
  if (!Array.isArray(app.middleware) || app.middleware.length === 0) {
    throw new Error(
      's3rver has changed: no middleware list to extend (local/services/s3/s3rver-listing-tokens.ts)',
    );
  }
  app.middleware.splice(app.middleware.length - 1, 0, listingTokens);
}

const listingTokens: Middleware = async (ctx, next) => {
  // A bucket-level GET (path-style `/<bucket>` or `/<bucket>/`) with list-type=2 is ListObjectsV2.
  if (ctx.method !== 'GET' || ctx.query['list-type'] !== '2' || !/^\/[^/]+\/?$/.test(ctx.path)) {
    return next();
  }
  const { 'continuation-token': token, ...rest } = ctx.query;
  if (typeof token === 'string' && token !== '') {
    const after = decodeListingToken(token);
    if (after === undefined) {
      throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect', {
        ArgumentName: 'continuation-token',
      });
    }
    ctx.query = { ...rest, 'start-after': after };
  }
  // s3rver would make a DES token for a truncated page: it is told the page is whole, and the
  // answer is marked truncated here with a token of this module's own.
  let truncatedAfter: string | undefined;
  const store = ctx.store;
  ctx.store = Object.create(store, {
    listObjects: {
      value: async (bucket: string, options: Record<string, unknown>) => {
        const result = await store.listObjects(bucket, options);
        if (!result.isTruncated) return result;
        // The page's last entry, a key or a common prefix (s3rver's own token named the last key).
        const last = [result.objects.at(-1)?.key ?? '', result.commonPrefixes.at(-1) ?? ''].sort().at(-1);
        truncatedAfter = last === '' ? undefined : last;
        return { ...result, isTruncated: false };
      },
    },
  }) as ListingStore;
  await next();
  const listing = (ctx.body as { ListBucketResult?: Record<string, unknown> } | undefined)?.ListBucketResult;
  if (listing === undefined) return;
  if (typeof token === 'string' && token !== '') {
    listing.StartAfter = undefined;
    listing.ContinuationToken = token;
  }
  if (truncatedAfter !== undefined) {
    listing.IsTruncated = true;
    listing.NextContinuationToken = encodeListingToken(truncatedAfter);
  }
};
