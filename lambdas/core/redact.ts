/**
 * Last line of defence against credentials leaking into logs and errors. The clients never put a
 * key into a message in the first place; this scrubs URLs (query strings of pre-signed URLs carry
 * signatures) and any text in which a known secret might appear.
 */

const SENSITIVE_QUERY =
  /^(x-amz-.*|signature|sig|token|access_token|api_key|apikey|key|credential|policy|expires)$/i;

/** Removes user-info and the values of signature-like query parameters from a URL. */
export function redactUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return '[unparseable url]';
  }
  parsed.username = '';
  parsed.password = '';
  for (const name of [...parsed.searchParams.keys()]) {
    if (SENSITIVE_QUERY.test(name)) parsed.searchParams.set(name, 'REDACTED');
  }
  return parsed.toString();
}

/** Replaces every occurrence of each secret (at least 4 characters long) with `[REDACTED]`. */
export function redactSecrets(text: string, secrets: Iterable<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[REDACTED]');
  }
  return out;
}
