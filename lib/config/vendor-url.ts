/**
 * What a vendor base URL may be: absolute, https (plain http only to a loopback host, the local
 * simulator), no credentials, no query or fragment. Shared by the configuration schema and the
 * local runner's variables, so both refuse the same URLs with the same words.
 */
import { describeValue } from '#lambdas/platform/input/schema';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** https only; plain http would send the org key in clear, except to the local simulator. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** What is wrong with a vendor base URL, or undefined. Shared with the local runner's variables. */
export function vendorUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `must be an absolute URL (got ${describeValue(text)})`;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    return `must use https (http is allowed only for loopback hosts) (got ${describeValue(text)})`;
  }
  if (url.username || url.password)
    return 'must not contain credentials: the API key lives in Secrets Manager';
  if (url.search || url.hash)
    return `must be a base URL without query or fragment (got ${describeValue(text)})`;
  return undefined;
}
