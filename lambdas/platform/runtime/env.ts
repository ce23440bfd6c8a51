/**
 * Environment variable readers for cold starts. Every error is a ConfigurationError that names the
 * variable and says what is wrong, so a broken deployment points at the setting to fix.
 *
 * Values are quoted in messages: environment variables never hold secrets here (only secret ARNs),
 * and seeing the bad value is what makes the message useful. Quotes are cut to 80 characters.
 */
import { ConfigurationError } from '#lambdas/platform/errors';

export type Env = Readonly<Record<string, string | undefined>>;

/** The trimmed value, or undefined when the variable is unset or blank. */
export function optionalEnv(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export function requireEnv(env: Env, name: string): string {
  const value = optionalEnv(env, name);
  if (value === undefined) throw new ConfigurationError(name, 'is required but not set');
  return value;
}

/** An absolute http(s) URL without user-info, normalised without a trailing slash. */
export function readUrlEnv(env: Env, name: string, fallback?: string): string {
  const raw = optionalEnv(env, name) ?? fallback;
  if (raw === undefined) throw new ConfigurationError(name, 'is required but not set');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigurationError(name, `must be an absolute http(s) URL, got ${quote(raw)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigurationError(name, `must be an http(s) URL, got protocol ${quote(url.protocol)}`);
  }
  if (url.username !== '' || url.password !== '') {
    // Credentials belong in Secrets Manager, never in an environment variable.
    throw new ConfigurationError(name, 'must not contain user-info (credentials go in Secrets Manager)');
  }
  return url.toString().replace(/\/+$/, '');
}

/** An S3 bucket name (the general-purpose bucket rules, loosely). */
/**
 * A comma-separated list of origins (`scheme://host[:port]`, http or https), normalised; [] when
 * unset. For VENDOR_ALLOWED_ORIGINS: where vendor requests may go besides the vendor's base URLs.
 */
export function readOriginsEnv(env: Env, name: string): string[] {
  const raw = optionalEnv(env, name);
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const url = URL.canParse(part) ? new URL(part) : undefined;
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
        throw new ConfigurationError(name, `must list http(s) origins, got ${quote(part)}`);
      }
      if (url.username || url.password || url.search || url.hash || url.pathname !== '/') {
        throw new ConfigurationError(name, `must list origins only (scheme, host, port), got ${quote(part)}`);
      }
      return url.origin;
    });
}

export function readBucketEnv(env: Env, name: string): string {
  const value = requireEnv(env, name);
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(value)) {
    throw new ConfigurationError(name, `must be an S3 bucket name, got ${quote(value)}`);
  }
  return value;
}

function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);
}
