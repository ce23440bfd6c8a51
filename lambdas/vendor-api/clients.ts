/**
 * The vendor's three clients built at once, for the local runner and the tests. A handler builds
 * only the client it calls (its workflow's vendor-deps.ts), so it bundles no other; everything else
 * is imported from the module that defines it.
 */
import { BreachClient } from './breach/breach-client.ts';
import { KeysClient } from './keys/keys-client.ts';
import { ScanClient } from './scan/scan-client.ts';
import type { StatusVocabulary } from './scan/types.ts';
import type { CredentialProvider, VendorHttpSettings } from './transport/types.ts';

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
