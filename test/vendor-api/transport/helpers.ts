/**
 * Fixtures of the vendor-client tests: credential providers that behave like the Secrets Manager
 * reader (cached, re-read on forceRefresh), a recording sleep, fast settings, and tools to prove
 * that no key leaks.
 */
import { inspect } from 'node:util';
import type {
  CredentialProvider,
  CredentialRequest,
  VendorHttpSettings,
} from '#lambdas/vendor-api/transport/types';
import type { VendorSimulator } from '#local/simulator/types';
import { createMemoryLogger, type MemoryLogger } from '../../kit/loggers.ts';

/**
 * Like the real secret reader: returns a cached key, and re-reads "the secret" (here: the
 * simulator's current key) only when forced. `calls` records every call's options.
 */
export function secretStoreCredentials(sim: VendorSimulator): CredentialProvider & {
  calls: CredentialRequest[];
} {
  let cached = sim.apiKey;
  const calls: CredentialRequest[] = [];
  const provider = async (options?: CredentialRequest) => {
    calls.push({ forceRefresh: options?.forceRefresh ?? false, pending: options?.pending ?? false });
    // No rotation is in progress in this store: there is no pending key.
    if (options?.pending) return undefined;
    if (options?.forceRefresh) cached = sim.apiKey;
    return cached;
  };
  return Object.assign(provider, { calls });
}

/**
 * Secrets Manager between the vendor's rotate and finishSecret: AWSCURRENT (cached or re-read)
 * still holds `current`, and AWSPENDING holds whatever `pending()` answers.
 */
export function midRotationCredentials(
  current: string,
  pending: () => string | undefined,
): CredentialProvider & { calls: CredentialRequest[] } {
  const calls: CredentialRequest[] = [];
  const provider = async (options?: CredentialRequest) => {
    calls.push({ forceRefresh: options?.forceRefresh ?? false, pending: options?.pending ?? false });
    return options?.pending ? pending() : current;
  };
  return Object.assign(provider, { calls });
}

/** A provider that always answers `key`, refresh or not, and has no pending key. */
export function fixedCredentials(key: string): CredentialProvider & { calls: number } {
  const state = { calls: 0 };
  const provider = async (options?: CredentialRequest) => {
    state.calls += 1;
    return options?.pending ? undefined : key;
  };
  return Object.defineProperty(provider, 'calls', { get: () => state.calls }) as CredentialProvider & {
    calls: number;
  };
}

/** Records each requested delay and resolves at once, so backoff tests take no wall time. */
export function recordingSleep(): ((ms: number) => Promise<void>) & { delays: number[] } {
  const delays: number[] = [];
  const sleep = async (ms: number) => {
    delays.push(ms);
  };
  return Object.assign(sleep, { delays });
}

/** Fast, deterministic settings: no real sleeping, jitter fixed at its maximum, short timeouts. */
export function testSettings(
  sim: VendorSimulator,
  overrides: Partial<VendorHttpSettings> = {},
): VendorHttpSettings & {
  sleep: ReturnType<typeof recordingSleep>;
  logger: MemoryLogger;
} {
  return {
    baseUrl: sim.url,
    // As the local runner passes it for a simulator it started: pre-signed downloads go there.
    allowedOrigins: [sim.storageUrl],
    credentials: secretStoreCredentials(sim),
    requestTimeoutMs: 2_000,
    idleTimeoutMs: 2_000,
    random: () => 1,
    ...overrides,
    sleep: (overrides.sleep as ReturnType<typeof recordingSleep> | undefined) ?? recordingSleep(),
    logger: (overrides.logger as MemoryLogger | undefined) ?? createMemoryLogger(),
  };
}

/** Resolves with what the promise rejected with; fails the test when it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Every way an error could end up in a log, a state payload or a console. */
export function renderings(error: unknown): string[] {
  const e = error as Error;
  return [
    String(e),
    String(e?.message),
    String(e?.stack),
    safeJson(e),
    inspect(e, { depth: 10, showHidden: true }),
    inspect((e as { cause?: unknown })?.cause, { depth: 10, showHidden: true }),
  ];
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** True when any header of the request carries the key, under any name. */
export function headersContain(headers: Readonly<Record<string, unknown>>, key: string): boolean {
  return Object.values(headers).some((value) => String(value).includes(key));
}
