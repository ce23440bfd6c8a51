/**
 * Asking the credential provider for a key: the current one (cached, or re-read after a 401), or
 * the pending one of a rotation in progress. A key goes into a header, so it must be non-empty and
 * free of CR, LF and NUL (a header-injection vector; node:http would reject it anyway). Each key
 * handed out is registered with the redaction (`rememberKeyValue`), so whatever a vendor echoes of
 * it is removed from every text the pipeline keeps.
 */
import { ConfigurationError } from '#lambdas/platform/errors';
import { rememberKeyValue } from '#lambdas/platform/redaction/redact';
import type { CredentialProvider, VendorLogger } from './types.ts';

const HEADER_BREAKING = /[\r\n\0]/;

/** The current key; a missing or unusable one is a ConfigurationError naming the API. */
export async function currentKey(
  api: string,
  credentials: CredentialProvider,
  operation: string,
  forceRefresh: boolean,
): Promise<string> {
  const key = await credentials(forceRefresh ? { forceRefresh: true } : undefined);
  if (typeof key !== 'string' || key.trim() === '') {
    throw new ConfigurationError(`${api} credentials`, `the provider returned no key for ${operation}`);
  }
  if (HEADER_BREAKING.test(key)) {
    throw new ConfigurationError(`${api} credentials`, 'the key contains a line break or NUL');
  }
  // Every key sent is known to the redaction before its answer comes back, which may echo it.
  rememberKeyValue(key);
  return key;
}

/**
 * The pending key when there is a usable one that differs from `refused`; never throws for its
 * absence: the refused current key is the error to report, not a failed pending read.
 */
export async function pendingKey(
  api: string,
  credentials: CredentialProvider,
  logger: VendorLogger | undefined,
  operation: string,
  refused: string,
): Promise<string | undefined> {
  let key: string | undefined;
  try {
    key = await credentials({ pending: true });
  } catch (error) {
    logger?.warn('reading the pending credential failed', {
      api,
      operation,
      errorName: error instanceof Error ? error.name : 'UnknownError',
    });
    return undefined;
  }
  if (typeof key !== 'string' || key.trim() === '' || key === refused || HEADER_BREAKING.test(key))
    return undefined;
  rememberKeyValue(key);
  return key;
}
