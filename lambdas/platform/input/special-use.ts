/**
 * Special-use domain names: which are refused, which configuration may allow, and how. Split from
 * validation.ts, which applies them after the syntax checks.
 */
import { InvalidInputError } from '#lambdas/platform/errors';
import { ENV } from '#lambdas/platform/runtime/variables';

/**
 * Special-use names (RFC 6761, RFC 6762 `.local`, ICANN's `.internal`): they never name a public host,
 * so a scan of one is a mistake or an attempt to reach something private. `.example` as a TLD is
 * refused; example.com/.org/.net are ordinary second-level names and stay valid.
 */
const SPECIAL_USE_SUFFIXES = ['localhost', 'local', 'internal', 'invalid', 'test', 'example'] as const;
/**
 * Refused even when configuration allows their suffix: localhost is the machine the scan runs on and
 * metadata.google.internal hands out cloud credentials; no lab needs the vendor to scan either.
 */
const NEVER_ALLOWED = /^(?:localhost|.+\.localhost|metadata\.google\.internal)$/;

/** The special-use suffixes configuration may allow (`scan.allowSpecialUseDomains`). */
export const ALLOWABLE_SPECIAL_USE: readonly string[] = SPECIAL_USE_SUFFIXES.filter((s) => s !== 'localhost');

/** The variable that carries `scan.allowSpecialUseDomains` to the handlers (comma-separated). */
export const ALLOW_SPECIAL_USE_VARIABLE = ENV.allowSpecialUseDomains;

/**
 * For re-checking a domain that an intake point (StartScan, the list parser, the configuration)
 * already accepted under the configured allowance: the syntax is checked again, and the names
 * that are never scanned, but an allowed special-use suffix is not refused a second time.
 */
export const ALREADY_ACCEPTED: DomainOptions = Object.freeze({ allowSpecialUse: ALLOWABLE_SPECIAL_USE });

export interface DomainOptions {
  /** Special-use suffixes (e.g. `['test']` for a lab) accepted anyway; check them with `checkAllowedSpecialUse`. */
  readonly allowSpecialUse?: readonly string[];
}

/**
 * Checks configuration's list of allowed special-use suffixes.
 *
 * @returns the suffixes in lower case, without a leading dot
 * @throws InvalidInputError for anything that is not one of the known special-use suffixes
 */
export function checkAllowedSpecialUse(input: readonly unknown[], inputName: string): string[] {
  return input.map((value, index) => {
    const suffix = typeof value === 'string' ? value.trim().toLowerCase().replace(/^\./, '') : '';
    if (!(SPECIAL_USE_SUFFIXES as readonly string[]).includes(suffix) || suffix === 'localhost') {
      throw new InvalidInputError(
        `${inputName}[${index}]`,
        `must be one of ${SPECIAL_USE_SUFFIXES.filter((s) => s !== 'localhost').join(', ')}`,
      );
    }
    return suffix;
  });
}

/** Returns a reason when `host` (already normalised) is a special-use name that is not allowed. */
export function specialUse(host: string, allowed: readonly string[]): string | undefined {
  if (NEVER_ALLOWED.test(host)) return `is a special-use name ('${host}') that is never scanned`;
  const tld = host.slice(host.lastIndexOf('.') + 1);
  if (!(SPECIAL_USE_SUFFIXES as readonly string[]).includes(tld) || allowed.includes(tld)) return undefined;
  return `is under the special-use top-level domain '.${tld}'`;
}
