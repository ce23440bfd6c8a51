/**
 * The vendor checked once before any work (one authenticated, read-only call), so a refused key, an
 * unreachable vendor or a base URL with a wrong path is one clear exit 2 instead of a failure per
 * domain.
 */

import {
  ConfigurationError,
  VendorAuthError,
  VendorHttpError,
  VendorNetworkError,
  VendorTimeoutError,
} from '#lambdas/platform/errors';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';

/** The requests `preflight` makes, as the simulator names operations (`METHOD path`). */
export const PREFLIGHT_OPERATIONS: readonly string[] = ['GET /stats', 'GET /view_breaches'];

/** The vendor API a local command needs. */
export type PreflightApi = 'scan' | 'breach';

/**
 * One cheap, read-only call to the API the command needs (`GET /stats`, `GET /view_breaches`), so
 * a refused key, an unreachable vendor or a base URL with a wrong path is a configuration error
 * (exit 2) before any work starts, naming the variable the user set. Any other answer (even an
 * error) means the vendor is there and the key was not refused.
 */
export async function preflight(
  vendor: {
    readonly scanApiUrl: string;
    readonly breachApiUrl: string;
    readonly apiKey: string;
    readonly urlVariable?: (api: PreflightApi) => string;
  },
  api: PreflightApi = 'scan',
): Promise<void> {
  const baseUrl = api === 'scan' ? vendor.scanApiUrl : vendor.breachApiUrl;
  const settings = {
    baseUrl,
    credentials: async () => vendor.apiKey,
    retry: { maxAttempts: 1 },
    requestTimeoutMs: 15_000,
  };
  const client = api === 'scan' ? new ScanClient(settings) : new BreachClient(settings);
  const variable = vendor.urlVariable?.(api) ?? vendorApiVariables(api).url;
  const operation = PREFLIGHT_OPERATIONS[api === 'scan' ? 0 : 1];
  try {
    await (client instanceof ScanClient ? client.getStats() : client.listReports());
  } catch (error) {
    if (error instanceof VendorAuthError) {
      throw new ConfigurationError(
        'VENDOR_API_KEY',
        `is refused by the vendor at ${baseUrl} (HTTP ${error.status})`,
      );
    }
    // The API's own path is not there: the base URL is wrong (an extra /api, a missing /v1), and
    // every call of the run would answer 404 too.
    if (error instanceof VendorHttpError && (error.status === 404 || error.status === 405)) {
      throw new ConfigurationError(
        variable,
        `${baseUrl} answers HTTP ${error.status} to ${operation}, a path the vendor's API has: is the base URL right (no path added or missing)?`,
      );
    }
    if (
      (error instanceof VendorNetworkError && error.requestNotSent) ||
      error instanceof VendorTimeoutError
    ) {
      const reason = error instanceof VendorNetworkError ? (error.code ?? 'connection failed') : 'timed out';
      throw new ConfigurationError(variable, `cannot be reached: ${baseUrl} (${reason})`);
    }
  } finally {
    await client.close();
  }
}
