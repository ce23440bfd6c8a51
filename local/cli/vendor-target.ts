/**
 * The vendor `npm start` talks to: the real one when a vendor URL is set, else the built-in
 * simulator on a free loopback port.
 */

import { ConfigurationError } from '#lambdas/platform/errors';
import { readOriginsEnv } from '#lambdas/platform/runtime/env';
import { ENV } from '#lambdas/platform/runtime/variables';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import type { VendorApi } from '#lambdas/registry';
import { isLoopbackHost, vendorUrlProblem } from '../../lib/config/schema.ts';
import { lostStartAnswer } from '../simulator/faults.ts';
import { startVendorSimulator } from '../simulator/index.ts';
import type { VendorSimulator } from '../simulator/types.ts';

export interface VendorTarget {
  readonly scanApiUrl: string;
  readonly keysApiUrl: string;
  readonly breachApiUrl: string;
  readonly apiKey: string;
  readonly orgUuid: string | undefined;
  /**
   * Origins vendor requests may reach besides the base URLs (the destination rule: anything else
   * must be https to a public address). The built-in simulator's storage origin, which is on
   * loopback, for a simulator this run started; VENDOR_ALLOWED_ORIGINS for a vendor given by URL.
   */
  readonly allowedOrigins: readonly string[];
  readonly label: string;
  /**
   * Where each API's base URL came from, as an error should name it: the variable the user set for
   * it, or the one set for another API whose value it defaulted to. Undefined for the simulator.
   */
  readonly urlVariable?: (api: VendorApi) => string;
  /**
   * Why the vendor call that just failed met a fault npm start injected on purpose, once per
   * injected fault (the first failure of its operation); undefined for every other failure.
   */
  readonly injectedFault?: (operation: string) => string | undefined;
  /** The built-in simulator, when it is the vendor: commands that stage a scenario script it. */
  readonly simulator?: VendorSimulator;
  close(): Promise<void>;
}

/**
 * A breach vendor given by URL on loopback (a simulator you started) redirects its report downloads
 * to another loopback origin, which the destination rule refuses unless VENDOR_ALLOWED_ORIGINS lists
 * it: found before the run, not after its at-most-once recon is spent. Undefined when there is no
 * such problem.
 */
export function loopbackDownloadProblem(vendor: VendorTarget): string | undefined {
  if (vendor.simulator !== undefined || vendor.allowedOrigins.length > 0) return undefined;
  if (!isLoopbackHost(new URL(vendor.breachApiUrl).hostname)) return undefined;
  return (
    `is unset, and the breach API (${vendor.breachApiUrl}) is on loopback, a simulator you started: its report ` +
    'downloads redirect to its storage origin, which is refused unless listed here; set it to that origin ' +
    "(the simulator's Storage URL) and run again (no recon was sent)"
  );
}

/** A fault the runner adds to the simulator itself, and why. */
interface InjectedFault {
  readonly operation: string;
  readonly because: string;
}

/**
 * A vendor base URL from the environment, held to the rule synth applies to the configuration:
 * https, or plain http only to a loopback host (the key would otherwise travel in clear).
 */
function readUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = env[name]?.trim() || fallback;
  const problem = vendorUrlProblem(value);
  if (problem) throw new ConfigurationError(name, problem);
  return value.replace(/\/+$/, '');
}

/**
 * The real vendor when any of SCAN_API_URL, BREACH_API_URL or KEYS_API_URL is set (the others
 * default to the first one set, as in the configuration), else the built-in simulator on a free
 * loopback port.
 */
export async function resolveVendor(env: NodeJS.ProcessEnv, demo: boolean): Promise<VendorTarget> {
  const urlOf = (api: VendorApi) => vendorApiVariables(api).url;
  // The first one set, in this order, is the default of the others.
  const given = (['scan', 'breach', 'keys'] as const).map(urlOf).find((name) => env[name]?.trim());
  if (given !== undefined) {
    const primary = readUrl(env, given, '');
    const apiKey = env.VENDOR_API_KEY?.trim();
    if (!apiKey) throw new ConfigurationError('VENDOR_API_KEY', `is required when ${given} is set`);
    const scanApiUrl = readUrl(env, urlOf('scan'), primary);
    return {
      urlVariable: (api) =>
        env[urlOf(api)]?.trim() ? urlOf(api) : `${given} (used for ${urlOf(api)}, which is unset)`,
      scanApiUrl,
      keysApiUrl: readUrl(env, urlOf('keys'), primary),
      breachApiUrl: readUrl(env, urlOf('breach'), primary),
      apiKey,
      orgUuid: env.ORG_UUID?.trim() || undefined,
      // Only what the user lists: a vendor on loopback does not make every loopback port reachable.
      allowedOrigins: readOriginsEnv(env, ENV.vendorAllowedOrigins),
      label: scanApiUrl,
      close: async () => {},
    };
  }
  const simulator = await startVendorSimulator({ pollsToFinish: demo ? 2 : 3 });
  // The demo loses the answer of its first start after the scan is created, so its progress shows
  // StartScan settling the doubt from the listing (adopting that scan) instead of rejecting it.
  const injected: InjectedFault[] = [];
  if (demo) {
    const because =
      'npm start loses the answer of its first scan start, to show StartScan adopting the scan it made';
    simulator.addFault(lostStartAnswer(because));
    injected.push({ operation: 'scan.startScan', because });
  }
  return {
    scanApiUrl: simulator.url,
    keysApiUrl: simulator.url,
    breachApiUrl: simulator.url,
    get apiKey() {
      return simulator.apiKey;
    },
    orgUuid: simulator.orgUuid,
    allowedOrigins: [simulator.storageUrl],
    label: `built-in simulator at ${simulator.url}`,
    simulator,
    injectedFault: (operation) => {
      const index = injected.findIndex((fault) => fault.operation === operation);
      return index < 0 ? undefined : injected.splice(index, 1)[0]?.because;
    },
    close: () => simulator.close(),
  };
}
