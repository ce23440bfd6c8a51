/** The vendor transport's settings: defaults, validation, and the resolved form the class uses. */
import { ConfigurationError } from '#lambdas/platform/errors';
import { DestinationGuard } from './destination.ts';
import { DEFAULT_RETRY_POLICY } from './retry-policy.ts';
import type {
  CredentialProvider,
  RetryPolicy,
  VendorAttemptObserver,
  VendorHttpSettings,
  VendorLogger,
} from './types.ts';

export interface ResolvedSettings {
  readonly baseUrl: URL;
  readonly basePath: string;
  readonly credentials: CredentialProvider;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly retry: RetryPolicy;
  readonly logger: VendorLogger | undefined;
  readonly observer: VendorAttemptObserver | undefined;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  readonly maxRedirects: number;
  /** Where requests may go: the base origin and `allowedOrigins` as they are, else public https. */
  readonly destinations: DestinationGuard;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

export const DEFAULT_MAX_REDIRECTS = 5;

export function resolveSettings(api: string, s: VendorHttpSettings): ResolvedSettings {
  const setting = (name: string) => `${api} ${name}`;
  if (typeof s.credentials !== 'function') {
    throw new ConfigurationError(setting('credentials'), 'a credential provider function is required');
  }
  let baseUrl: URL;
  try {
    baseUrl = new URL(s.baseUrl);
  } catch {
    throw new ConfigurationError(setting('baseUrl'), 'is not an absolute URL');
  }
  if (baseUrl.protocol !== 'https:' && baseUrl.protocol !== 'http:') {
    throw new ConfigurationError(setting('baseUrl'), 'must use https (or http for a local simulator)');
  }
  if (baseUrl.username || baseUrl.password || baseUrl.search || baseUrl.hash) {
    throw new ConfigurationError(setting('baseUrl'), 'must not carry user-info, a query or a fragment');
  }
  const retry: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...definedOnly(s.retry ?? {}) };
  const positive = (name: string, value: number, min = 1) => {
    if (!Number.isFinite(value) || value < min) {
      throw new ConfigurationError(setting(name), `must be a number >= ${min}, got ${value}`);
    }
    return value;
  };
  positive('retry.maxAttempts', retry.maxAttempts);
  positive('retry.baseDelayMs', retry.baseDelayMs, 0);
  positive('retry.maxDelayMs', retry.maxDelayMs, 0);
  positive('retry.maxElapsedMs', retry.maxElapsedMs, 0);
  const allowedOrigins = (s.allowedOrigins ?? []).map((origin, i) => {
    const name = setting(`allowedOrigins[${i}]`);
    if (!URL.canParse(origin)) throw new ConfigurationError(name, 'is not an absolute URL');
    const url = new URL(origin);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new ConfigurationError(name, 'must be an http or https origin');
    }
    if (url.username || url.password || url.search || url.hash || url.pathname !== '/') {
      throw new ConfigurationError(name, 'must be an origin only (scheme, host and port)');
    }
    return url.origin;
  });
  return {
    baseUrl,
    basePath: baseUrl.pathname.replace(/\/+$/, ''),
    credentials: s.credentials,
    requestTimeoutMs: positive('requestTimeoutMs', s.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
    idleTimeoutMs: positive('idleTimeoutMs', s.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS),
    retry,
    logger: s.logger,
    observer: s.observer,
    sleep: s.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    random: s.random ?? Math.random,
    maxRedirects: positive('maxRedirects', s.maxRedirects ?? DEFAULT_MAX_REDIRECTS, 0),
    destinations: new DestinationGuard([baseUrl.origin, ...allowedOrigins], s.resolveHost),
  };
}

export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
