/**
 * Stand-ins for clients a function is deliberately not given (lambdas/registry.ts grants it no
 * such access): the function then bundles no such client, and a call fails loudly with a
 * ConfigurationError naming the setting, instead of later on IAM.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { ConfigurationError } from '#lambdas/platform/errors';
import { ENV } from '#lambdas/platform/runtime/variables';

/** A client whose every method rejects: `<what>.<method>` names the call in the error. */
export function noAccess<T extends object>(setting: string, what: string, reason: string): T {
  return new Proxy({} as T, {
    get(_target, property) {
      // Not a thenable: `await` on the stand-in must not call it.
      if (property === 'then') return undefined;
      // Every client method the pipeline calls is asynchronous: the call rejects, as a real one would.
      return () =>
        Promise.reject(new ConfigurationError(setting, `${reason} (it used ${what}.${String(property)})`));
    },
  });
}

/** For functions that lambdas/registry.ts gives no object access (start, poll, delete). */
export const NO_S3_ACCESS: S3Client = noAccess<S3Client>(
  ENV.resultsBucket,
  's3',
  'this function has no object access by design',
);
