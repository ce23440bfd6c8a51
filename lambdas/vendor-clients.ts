/**
 * Public surface of the vendor clients. Handlers build them once at module scope with
 * `createVendorClients` and pass them to the core functions.
 */
import { BreachClient } from './breach/vendor-api/breach-client.ts';
import type { CredentialProvider, VendorHttpSettings } from './platform/vendor-api/types.ts';
import { KeysClient } from './rotation/vendor-api/keys-client.ts';
import { ScanClient } from './scan/vendor-api/scan-client.ts';
import type { StatusVocabulary } from './scan/vendor-api/types.ts';

export {
  BreachClient,
  type BreachClientSettings,
  type BreachReportEntry,
} from './breach/vendor-api/breach-client.ts';
export type * from './breach/vendor-api/types.ts';
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
} from './platform/vendor-api/http.ts';
export type * from './platform/vendor-api/types.ts';
export { KeysClient, type KeysClientSettings } from './rotation/vendor-api/keys-client.ts';
export {
  CANDIDATE_LIMITS,
  NEW_KEY_FIELDS,
  rotateAnswerCandidates,
} from './rotation/vendor-api/rotate-answer.ts';
export type * from './rotation/vendor-api/types.ts';
export { ScanClient, type ScanClientSettings, type StartScanOptions } from './scan/vendor-api/scan-client.ts';
export {
  classifyScanStatus,
  DEFAULT_STATUS_VOCABULARY,
  parseStatusVocabulary,
} from './scan/vendor-api/status.ts';
export type * from './scan/vendor-api/types.ts';

/** Settings every client shares: timeouts, retry policy, logger and the test seams. */
export type CommonHttpSettings = Omit<VendorHttpSettings, 'baseUrl' | 'credentials'>;

export interface VendorClientsSettings extends CommonHttpSettings {
  readonly scanApiUrl: string;
  readonly keysApiUrl: string;
  readonly breachApiUrl: string;
  /** One provider may serve all three (the default deployment: one org key). */
  readonly scanCredentials: CredentialProvider;
  readonly keysCredentials: CredentialProvider;
  readonly breachCredentials: CredentialProvider;
  /** Needed only for the keys client; without it `keys` is undefined. */
  readonly orgUuid?: string;
  readonly statusVocabulary?: StatusVocabulary;
}

export interface VendorClients {
  readonly scan: ScanClient;
  readonly breach: BreachClient;
  readonly keys: KeysClient | undefined;
  /** Closes every client's connections (tests and the local runner). */
  close(): Promise<void>;
}

export function createVendorClients(settings: VendorClientsSettings): VendorClients {
  const {
    scanApiUrl,
    keysApiUrl,
    breachApiUrl,
    scanCredentials,
    keysCredentials,
    breachCredentials,
    orgUuid,
    statusVocabulary,
    ...common
  } = settings;
  const scan = new ScanClient({
    ...common,
    baseUrl: scanApiUrl,
    credentials: scanCredentials,
    statusVocabulary,
  });
  const breach = new BreachClient({ ...common, baseUrl: breachApiUrl, credentials: breachCredentials });
  const keys =
    orgUuid === undefined
      ? undefined
      : new KeysClient({
          ...common,
          baseUrl: keysApiUrl,
          credentials: keysCredentials,
          orgUuid,
        });
  return {
    scan,
    breach,
    keys,
    async close() {
      await Promise.all([scan.close(), breach.close(), keys?.close()]);
    },
  };
}
