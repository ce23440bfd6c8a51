/**
 * What a key secret holds before anyone stored a key in it. The stack creates it with a placeholder
 * (lib/platform/vendor-secrets.ts), because the key must never be in the template; readers fail on
 * it with "no apiKey", and the rotation function treats it as "never seeded". Kept free of SDK
 * imports: the CDK app loads it too.
 */

/** Field names an API key may be stored under in a JSON secret, in order of preference. */
export const API_KEY_FIELDS = ['apiKey', 'api_key', 'key'] as const;

/** The field that marks the stack's placeholder value. */
export const PLACEHOLDER_FIELD = 'placeholder';

/** True for the stack's placeholder: a JSON object with `placeholder` and no key field. */
export function isUnseededPlaceholder(value: string): boolean {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return false;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return false;
  const record = json as Record<string, unknown>;
  return (
    typeof record[PLACEHOLDER_FIELD] === 'string' && API_KEY_FIELDS.every((f) => record[f] === undefined)
  );
}
