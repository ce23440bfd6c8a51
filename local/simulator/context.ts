/** The simulator's state, shared by both servers and every route. */
import type { IncomingMessage } from 'node:http';
import type { Latency } from '../services/latency.ts';
import type { KeyStore } from './credentials.ts';
import type { FaultBook } from './faults.ts';
import type { SimResponse } from './http.ts';
import type { ReportStore } from './reports.ts';
import type { RotateAnswerFault } from './rotate-answers.ts';
import type { ScanStore } from './scans.ts';
import type { UrlSigner } from './signing.ts';
import type { SimulatedApi, StorageRequestRecord } from './types.ts';

export interface ResolvedOptions {
  readonly host: string;
  readonly port: number;
  readonly storagePort: number;
  readonly orgUuid: string;
  readonly reportBytes: number;
  readonly reportPaddingBytes: number;
  readonly debugBytes: number;
  readonly logsBytes: number;
  readonly verbose: boolean;
  readonly latency: Latency | undefined;
}

export interface SimContext {
  readonly options: ResolvedOptions;
  readonly now: () => Date;
  readonly keys: KeyStore;
  readonly scans: ScanStore;
  readonly reports: ReportStore;
  readonly faults: FaultBook;
  readonly signer: UrlSigner;
  readonly counts: Map<string, number>;
  readonly storageRequests: StorageRequestRecord[];
  /** Aborted by close(), so that delayed answers give up instead of holding the process open. */
  readonly closing: AbortSignal;
  /** Known once the storage origin listens. */
  storageUrl: string;
}

/**
 * `bearer`: `Authorization: Bearer <key>` (scanning, key management). `x-api-key`: breach reports.
 * `presigned`: the storage origin, where the URL's signature is the credential and any other
 * credential is an error.
 */
export type AuthScheme = 'bearer' | 'x-api-key' | 'presigned';

export interface RouteCall {
  readonly req: IncomingMessage;
  /** Raw (still percent-encoded) path parameters, in template order. */
  readonly params: readonly string[];
  readonly query: URLSearchParams;
  readonly sim: SimContext;
  /** The `rotate-answer` fault that matched this request, for the one route it shapes. */
  readonly rotateAnswer?: RotateAnswerFault;
}

export interface Route {
  readonly api: SimulatedApi;
  readonly method: string;
  /** `METHOD /path/{param}`: the key of requestCount(). */
  readonly template: string;
  readonly pattern: RegExp;
  readonly auth: AuthScheme;
  readonly handle: (call: RouteCall) => SimResponse | Promise<SimResponse>;
  /** What a request is about, stable across runs (see FaultTarget.subject); read before faults. */
  readonly subject?: (call: RouteCall) => string | undefined | Promise<string | undefined>;
}

export function route(
  api: SimulatedApi,
  method: string,
  path: string,
  auth: AuthScheme,
  handle: Route['handle'],
  subject?: Route['subject'],
): Route {
  const source = path.replace(/[.]/g, '\\.').replace(/\{[a-z_]+\}/g, '([^/]+)');
  return {
    api,
    method,
    template: `${method} ${path}`,
    pattern: new RegExp(`^${source}$`),
    auth,
    handle,
    ...(subject ? { subject } : {}),
  };
}
