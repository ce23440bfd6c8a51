/**
 * Public API of the vendor simulator (local/simulator). Tests import `startVendorSimulator` from
 * `#local/simulator/index` and script faults in-process; `npm run simulator` exposes the same
 * controls over HTTP under /__simulator/ (loopback only).
 */

import type { Latency } from '../services/latency.ts';
import type { RotateAnswerShape, RotateAnswerTuning } from './rotate-answers.ts';
import type { OutputAnswers } from './scan-outputs.ts';

/** `storage` is the separate origin that serves report ZIPs behind the pre-signed redirect. */
export type SimulatedApi = 'scan' | 'keys' | 'breach' | 'storage';

export type Fault =
  /** Answer with this status instead of handling the request (429 sends Retry-After when given). */
  | {
      readonly type: 'status';
      readonly status: number;
      readonly retryAfter?: string | number;
      readonly body?: string;
      /** Binary body (base64), e.g. a corrupt ZIP served in place of a report. */
      readonly bodyBase64?: string;
      /** Content-Type of the body. @default - JSON when `body` parses, else text/plain; octet-stream for bodyBase64 */
      readonly contentType?: string;
      /**
       * A hostile vendor's error: a JSON body that echoes the request it refuses, its body (the
       * addresses a recon sent) and its headers (the API key), as some APIs do. Not with `body`.
       */
      readonly echoRequest?: boolean;
      /**
       * `before` (the default): answer instead of handling, nothing was done. `after`: handle the
       * request (a POST /scan creates its scan), then answer with this status instead.
       */
      readonly phase?: FaultPhase;
    }
  /** Handle normally, but wait this long before sending headers. */
  | { readonly type: 'latency'; readonly ms: number }
  /**
   * Accept the request and never answer (until the client gives up or the server closes);
   * `phase: 'after'` handles it first (the scan exists, its answer never comes).
   */
  | { readonly type: 'hang'; readonly phase?: FaultPhase }
  /** Send headers and `afterBytes` of the body, then destroy the socket (ECONNRESET at the client). */
  | { readonly type: 'reset-mid-body'; readonly afterBytes: number }
  /** Declare the full Content-Length, send `afterBytes`, then end the socket cleanly (premature close). */
  | { readonly type: 'truncate'; readonly afterBytes: number }
  /** Answer 200 with a JSON content type and a body that does not parse. */
  | { readonly type: 'malformed-json' }
  /** Close the connection before reading the request: nothing was processed. */
  | { readonly type: 'refuse' }
  /** Process the request fully (e.g. rotate the key), then destroy the socket instead of answering. */
  | { readonly type: 'lose-response' }
  /**
   * Answer without Content-Length and without chunked framing (`connection: close`): the body
   * ends when the connection does. `afterBytes` cuts it short (default: send it all); `end` is how
   * the connection then ends: `close` (a clean FIN, indistinguishable from the real end) or
   * `reset`. The three shapes: complete, cut short with a clean close, cut short with a reset.
   */
  | { readonly type: 'unframed'; readonly afterBytes?: number; readonly end?: 'close' | 'reset' }
  /**
   * Key rotation only (`POST …/api/key/rotate`; other requests never match it): rotate as usual and
   * answer in this shape (./rotate-answers.ts), the new key somewhere inside unless `no-key`
   * (`same-key` does not rotate and hands back the key in use). The rest tunes it.
   */
  | ({ readonly type: 'rotate-answer'; readonly shape: RotateAnswerShape } & RotateAnswerTuning)
  /**
   * Answer 200 with chunked framing and no Content-Length, and a body of `bytes` zeros (default
   * 10 GiB), generated as it is read: `gzip` (the default) sends it gzip-encoded, about 1000:1, a
   * gzip bomb; `identity` sends the zeros themselves.
   */
  | { readonly type: 'oversized-body'; readonly bytes?: number; readonly encoding?: 'gzip' | 'identity' }
  /** Answer 200 with a ZIP of one deflated entry of `inflatedBytes` zeros (default 1 GiB, about 1000:1). */
  | { readonly type: 'zip-bomb'; readonly inflatedBytes?: number }
  /**
   * Answer 200 with a ZIP of `entries` entries (default 7) that all point at the same data: stored
   * bytes that do not compress (`stored`, the default, `entryBytes` default 1 MiB), or a deflate
   * bomb of zeros (`deflate`, `entryBytes` default 1 GiB).
   */
  | {
      readonly type: 'overlapping-zip';
      readonly entries?: number;
      readonly entryBytes?: number;
      readonly data?: 'stored' | 'deflate';
    }
  /** Process the request, then answer with its JSON `output` field replaced by `bytes` characters (default 1 MiB). */
  | { readonly type: 'oversized-output'; readonly bytes?: number }
  /**
   * Process the request, then answer 302 to an internal address instead (REDIRECT_TARGETS in
   * ./adversarial.ts): the cloud metadata service by default, over IPv4 or IPv6, another loopback
   * port, or the same address written as a decimal or IPv4-mapped IPv6 host.
   */
  | { readonly type: 'redirect-internal'; readonly to?: RedirectTarget }
  /** Process the request, then answer 200 with a JSON object nested `depth` levels deep (default 20,000). */
  | { readonly type: 'deep-json'; readonly depth?: number }
  /**
   * Process the request, then send its real answer one byte every `intervalMs` (default 5,000):
   * never idle long enough for the client's idle timeout, so only a deadline ends it.
   */
  | { readonly type: 'trickle'; readonly intervalMs?: number }
  /**
   * A vendor that repeats the key the request carried (./key-echo.ts). `body` (the default): the
   * JSON answer gets the credential header (`authorization` or `x-api-key`) and a `note` holding
   * the bare key. `report-name`: `POST /recon` only; the report it makes is named `rpt-<key>-<hex>`.
   * `key-id`: the JSON answer's `key_id` is the bare key (key info naming the key by itself).
   */
  | { readonly type: 'key-echo'; readonly into?: 'body' | 'report-name' | 'key-id' }
  /**
   * Handle the request, then answer with these response headers set (replacing the real ones of
   * the same name, lower-case names): a vendor whose `Content-Type`, `ETag` or `Content-Encoding`
   * says whatever it likes, a key or an address included. `{key}` in a value is replaced by the
   * key the request carried.
   */
  | { readonly type: 'headers'; readonly set: Readonly<Record<string, string>> };

/** Where a `redirect-internal` fault points. */
export type RedirectTarget = 'metadata' | 'metadata-ipv6' | 'loopback' | 'decimal' | 'mapped';

/** Whether a fault strikes before the request is handled or after (its effect done, its answer lost). */
export type FaultPhase = 'before' | 'after';

export interface FaultRule {
  /** Limit to one API; omitted matches every API, the storage origin included. */
  readonly api?: SimulatedApi;
  /** HTTP method, upper case; omitted matches any. */
  readonly method?: string;
  /** Matched against the request path (without query). A string must be a prefix; a RegExp is tested. */
  readonly path?: string | RegExp;
  /** How many matching requests get the fault before the rule is used up. @default 1 */
  readonly times?: number;
  /**
   * The share of matching requests the fault strikes (0-1], drawn from the simulator's seeded
   * generator (`faultSeed`), so a soak is repeatable; a request it spares spends no use. @default 1
   */
  readonly probability?: number;
  readonly fault: Fault;
  /**
   * Set when npm start adds the rule itself (the demo's lost start answer): why, said beside the
   * fault wherever the run reports it, so a deliberate fault never reads as a problem.
   */
  readonly injectedBecause?: string;
}

/** What a scan of a given domain does, scripted per domain (exact, case-insensitive) or by RegExp. */
export type ScanBehaviour =
  | { readonly outcome: 'succeed'; readonly pollsToFinish?: number }
  | { readonly outcome: 'fail'; readonly pollsToFinish?: number }
  | { readonly outcome: 'never-finish' };

export interface SimulatorOptions {
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** 0 picks a free port. @default 0 */
  readonly port?: number;
  /** Initial org API key. @default a random `sk_sim_...` */
  readonly apiKey?: string;
  /** @default a random UUID */
  readonly orgUuid?: string;
  /**
   * Status polls a scan needs to finish: pending on poll 1, running until poll N, then finished.
   * 0 means finished on the first poll ("instant scans"). @default 3
   */
  readonly pollsToFinish?: number;
  /** Domains whose scans fail (the default behaviour for everything else is succeed). */
  readonly failingDomains?: readonly (string | RegExp)[];
  /** Approximate report size in bytes. @default 256 * 1024 */
  readonly reportBytes?: number;
  /**
   * Bytes of an extra stored entry (`attachments.bin`) in every breach report ZIP, to archive large
   * reports in tests and benchmarks. @default 0
   */
  readonly reportPaddingBytes?: number;
  /** Approximate debug output size in bytes. @default 64 * 1024 */
  readonly debugBytes?: number;
  /** Approximate log output size in bytes. @default 32 * 1024 */
  readonly logsBytes?: number;
  /**
   * Scan outputs served beyond report, logs and debug, by path (`/screenshots/{uuid}`), each
   * answered like those of local/simulator/scan-outputs.ts: for a pipeline whose table of
   * outputs was extended (ScanWorkflow's `outputs`). @default none
   */
  readonly outputAnswers?: OutputAnswers;
  /** Port of the separate storage origin; 0 picks a free port. @default 0 */
  readonly storagePort?: number;
  /** Lifetime of the pre-signed storage URLs that downloads redirect to. @default 300 */
  readonly downloadUrlTtlSeconds?: number;
  /** Clock for timestamps and URL expiry; tests inject one to expire pre-signed URLs. @default () => new Date() */
  readonly now?: () => Date;
  /**
   * Listings (`GET /scans`) a newly created scan stays out of, as an eventually consistent index
   * would lag behind a start. @default 0
   */
  readonly listingLag?: number;
  /** Seed of the generator `probability` rules draw from. @default 1 */
  readonly faultSeed?: number;
  /**
   * Added to every answer (vendor APIs and storage origin), as a real vendor is not on loopback.
   * @default none, or `npm start --vendor-latency`
   */
  readonly latency?: Latency;
  /** Print one line per request to stderr (never the key). @default false */
  readonly verbose?: boolean;
}

/** Who a report made with `createReport` is about. Kept in the simulator's memory only. */
export interface SimulatedPerson {
  /** @default 'Sim Person' */
  readonly name?: string;
  /** `example.org` addresses only give a `no_results` report. @default ['sim.person@example.com'] */
  readonly emails?: readonly string[];
}

/** Headers seen by the simulated storage origin (the target of the cross-origin redirect). */
export interface StorageRequestRecord {
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface ServedOutput {
  readonly domain: string;
  readonly uuid: string;
  /** The output's name in the scan outputs table (lambdas/scan/scan-outputs.ts), e.g. `report`. */
  readonly output: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface VendorSimulator {
  /** Base URL of all three APIs, e.g. http://127.0.0.1:54321 (no trailing slash). */
  readonly url: string;
  /** Base URL of the separate "pre-signed storage" origin that downloads finally redirect to. */
  readonly storageUrl: string;
  /** The key that currently works; changes on rotate. */
  readonly apiKey: string;
  readonly orgUuid: string;
  /** Add a fault rule; returns a function that removes it. */
  addFault(rule: FaultRule): () => void;
  clearFaults(): void;
  /** Script what scans of a domain do from now on. */
  scriptScan(domain: string | RegExp, behaviour: ScanBehaviour): void;
  /** Listings each scan created from now on stays out of (see `listingLag`). */
  setListingLag(listings: number): void;
  /**
   * Every scan the vendor holds for a domain, oldest first, whether the listing shows it yet or
   * not: the ground truth a test counts duplicates against.
   */
  scansOf(domain: string): readonly { readonly uuid: string; readonly createdAt: Date }[];
  /**
   * Every scan output the vendor answered with at least once (a response built, whether or not a
   * fault lost it), with the length and SHA-256 of its bytes before any content encoding.
   */
  outputsServed(): readonly ServedOutput[];
  /**
   * Scans of these domains that already ran to their scripted end, as if started earlier, with
   * no request made; returns their uuids. For benches that need a vendor holding 100,000 scans.
   */
  seedFinishedScans(domains: readonly string[]): string[];
  /** Make the current key invalid on all three APIs and issue a new one; returns the new key. */
  replaceKey(): string;
  /** Every request the storage origin received (to prove no credential reached it). */
  readonly storageRequests: readonly StorageRequestRecord[];
  /**
   * Put a report with exactly this name into the store (spaces, unicode and slashes allowed), as if
   * `POST /recon` had made it; it is listed and downloadable at once.
   */
  createReport(reportName: string, person?: SimulatedPerson): void;
  /** The next `POST /recon` answers with exactly this report name (one use). */
  scriptReportName(reportName: string): void;
  /**
   * Count of requests per `METHOD path-template`, e.g. `POST /scan`, for assertions. Templates:
   * `POST /scan`, `GET /scan`, `GET /status/{uuid}`, `GET /report/{uuid}`, `GET /logs/{uuid}`,
   * `GET /debug/{uuid}`, `GET /scans`, `DELETE /scan/{uuid}`, `GET /stats`,
   * `GET /orgs/{org_uuid}/api/key`, `POST /orgs/{org_uuid}/api/key/rotate`, `POST /recon`,
   * `GET /view_breaches`, `GET /download/{report_name}`, `GET /files/{file_name}` (the second hop)
   * and, on the storage origin, `GET /reports/{file_name}`.
   */
  requestCount(route: string): number;
  close(): Promise<void>;
}
