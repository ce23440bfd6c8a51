/**
 * The vendor's APIs as values (the vendor documents three). Each API's name is a type first: the
 * client folder that calls it registers it with the platform (VendorApiRegistry in
 * lambdas/platform/handler-declaration.ts), and this table must name exactly the registered ones,
 * so an API registered without its row here, or a row without its API, is a compile error. The
 * platform takes the list from its callers: the check of a secret's `apiKeys`
 * (lambdas/platform/secrets.ts) and the per-API key secrets (lib/platform/vendor-secrets.ts).
 *
 * Plain data, no client code: a handler that reads a key bundles this, not the vendor's clients.
 */
import type { VendorApi } from './platform/handler-declaration.ts';

// Each brings its API's registration into any program that reads this module, declarations
// included (tsc keeps a re-export where it drops an unused import): the package's declaration
// build starts at lib/index.ts, and a consumer's program would otherwise know no API at all.
export type {} from './breach/vendor-api/types.ts';
export type {} from './rotation/vendor-api/types.ts';
export type {} from './scan/vendor-api/types.ts';

/** Each vendor API and what it is, as a key secret's description names it. */
export const VENDOR_API_TITLES = {
  scan: 'scanning API',
  keys: 'key-management API',
  breach: 'breach-report API',
} as const satisfies Record<VendorApi, string>;

/** Every vendor API, in the order the vendor documents them. */
export const VENDOR_APIS = Object.keys(VENDOR_API_TITLES) as readonly VendorApi[];

/** What the one org key serves when every API shares it (its secret's description). */
export const ORG_KEY_USED_FOR = 'all three vendor APIs (scanning, key management, breach reports)';

/**
 * The API whose key is the org key: its rotate endpoint rotates it (rotation), so in per-api mode
 * its secret is the one native rotation rotates, and in single mode the one secret is.
 */
export const ORG_KEY_API: VendorApi = 'keys';
