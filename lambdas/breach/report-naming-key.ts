/** The key that names report folders: read by the functions that archive reports. */
import { hmacKeyFromSecret } from '#lambdas/platform/runtime/hmac-key';
import type { SecretReader } from '#lambdas/platform/secrets';
import { BREACH_VARIABLES } from './variables.ts';

/** A factory for `BreachDeps.reportNamingKey` over BREACH_REPORT_NAMING_KEY_SECRET_ARN. */
export function reportNamingKeyFromSecret(secrets?: SecretReader) {
  return hmacKeyFromSecret(
    BREACH_VARIABLES.reportNamingKeySecretArn,
    'the key that names report folders',
    secrets,
  );
}
