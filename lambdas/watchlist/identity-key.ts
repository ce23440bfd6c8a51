/** The key that names people: read by the functions that name them (PrepareWatchlist). */
import { hmacKeyFromSecret } from '#lambdas/platform/runtime/hmac-key';
import type { SecretReader } from '#lambdas/platform/secrets';
import { WATCHLIST_VARIABLES } from './variables.ts';

/** A factory for `WatchlistDeps.identityKey` over BREACH_IDENTITY_KEY_SECRET_ARN. */
export function identityKeyFromSecret(secrets?: SecretReader) {
  return hmacKeyFromSecret(WATCHLIST_VARIABLES.identityKeySecretArn, 'the key that names people', secrets);
}
