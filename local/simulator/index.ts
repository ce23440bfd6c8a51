/**
 * A stateful stand-in for the vendor's scanning, key management and breach report APIs, plus the
 * separate storage origin that report downloads redirect to. Tests and the local runner start it
 * on loopback; `npm run simulator` runs it alone.
 */
import { randomUUID } from 'node:crypto';
import { defaultLatency } from '../services/latency.ts';
import { breachRoutes, isBreachPath } from './breach-api.ts';
import type { ResolvedOptions, SimContext } from './context.ts';
import { controlPlane } from './control-plane.ts';
import { KeyStore } from './credentials.ts';
import { FaultBook } from './faults.ts';
import { type HttpError, jsonError } from './http.ts';
import { isKeysPath, keyRoutes } from './keys-api.ts';
import { ReportStore } from './reports.ts';
import { isScanPath, scanRoutes } from './scan-api.ts';
import { SCAN_OUTPUT_ANSWERS } from './scan-outputs.ts';
import { ScanStore, validatePolls } from './scans.ts';
import { createSimServer } from './server.ts';
import { UrlSigner } from './signing.ts';
import { createStorageOrigin } from './storage-origin.ts';
import type { SimulatorOptions, VendorSimulator } from './types.ts';

export type * from './types.ts';

function nonNegative(value: number | undefined, fallback: number, field: string): number {
  const result = value ?? fallback;
  if (!Number.isInteger(result) || result < 0) throw new TypeError(`${field} must be a non-negative integer`);
  return result;
}

function port(value: number | undefined, field: string): number {
  const result = value ?? 0;
  if (!Number.isInteger(result) || result < 0 || result > 65535)
    throw new TypeError(`${field} must be 0-65535`);
  return result;
}

function resolveOptions(options: SimulatorOptions): ResolvedOptions {
  const orgUuid = options.orgUuid ?? randomUUID();
  if (!/^[A-Za-z0-9._~-]+$/.test(orgUuid)) {
    throw new TypeError('orgUuid must be a non-empty string of URL-safe characters (a UUID)');
  }
  return {
    host: options.host ?? '127.0.0.1',
    port: port(options.port, 'port'),
    storagePort: port(options.storagePort, 'storagePort'),
    orgUuid,
    reportBytes: nonNegative(options.reportBytes, 256 * 1024, 'reportBytes'),
    reportPaddingBytes: nonNegative(options.reportPaddingBytes, 0, 'reportPaddingBytes'),
    debugBytes: nonNegative(options.debugBytes, 64 * 1024, 'debugBytes'),
    logsBytes: nonNegative(options.logsBytes, 32 * 1024, 'logsBytes'),
    verbose: options.verbose ?? false,
    latency: options.latency ?? defaultLatency('vendor'),
  };
}

/** A base URL clients can reach: wildcard listen addresses become loopback, IPv6 gets brackets. */
function baseUrl(host: string, listeningPort: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${listeningPort}`;
}

export async function startVendorSimulator(options: SimulatorOptions = {}): Promise<VendorSimulator> {
  const resolved = resolveOptions(options);
  const now = options.now ?? (() => new Date());
  const closing = new AbortController();
  const sim: SimContext = {
    options: resolved,
    now,
    keys: new KeyStore(options.apiKey, now),
    scans: new ScanStore(
      {
        pollsToFinish: validatePolls(options.pollsToFinish ?? 3, 'pollsToFinish'),
        failingDomains: options.failingDomains ?? [],
      },
      now,
    ),
    reports: new ReportStore(now, resolved.reportPaddingBytes),
    faults: new FaultBook(options.faultSeed ?? 1),
    signer: new UrlSigner(options.downloadUrlTtlSeconds ?? 300, now),
    counts: new Map(),
    storageRequests: [],
    closing: closing.signal,
    storageUrl: '',
  };
  sim.scans.setListingLag(options.listingLag ?? 0);
  const replaceKey = () => sim.keys.replace();

  const answers = { ...SCAN_OUTPUT_ANSWERS, ...options.outputAnswers };
  const api = createSimServer(sim, {
    name: 'simulator',
    routes: [...scanRoutes(answers), ...keyRoutes, ...breachRoutes],
    apiFor: (path) =>
      isScanPath(path, answers)
        ? 'scan'
        : isKeysPath(path)
          ? 'keys'
          : isBreachPath(path)
            ? 'breach'
            : undefined,
    renderError: (error: HttpError) =>
      jsonError(error.status, error.code, error.message, { ...error.headers }),
    controlPlane: controlPlane(sim, { replaceKey }),
  });
  const storage = createStorageOrigin(sim);

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      closing.abort();
      await Promise.all([api.close(), storage.close()]);
    })();
    return closed;
  };

  let url: string;
  try {
    url = baseUrl(resolved.host, await api.listen(resolved.host, resolved.port));
    sim.storageUrl = baseUrl(resolved.host, await storage.listen(resolved.host, resolved.storagePort));
  } catch (error) {
    await close();
    throw error;
  }

  return {
    url,
    storageUrl: sim.storageUrl,
    get apiKey() {
      return sim.keys.current;
    },
    orgUuid: resolved.orgUuid,
    addFault: (rule) => sim.faults.add(rule),
    clearFaults: () => sim.faults.clear(),
    scriptScan: (domain, behaviour) => sim.scans.script(domain, behaviour),
    setListingLag: (listings) => sim.scans.setListingLag(listings),
    scansOf: (domain) =>
      [...sim.scans.list()]
        .filter((scan) => scan.domain === domain.trim().toLowerCase())
        .map(({ uuid, createdAt }) => ({ uuid, createdAt })),
    outputsServed: () =>
      [...sim.scans.list()].flatMap((scan) =>
        [...scan.outputs].map(([output, meta]) => ({
          domain: scan.domain,
          uuid: scan.uuid,
          output,
          bytes: meta.length,
          sha256: meta.sha256,
        })),
      ),
    replaceKey,
    get storageRequests() {
      return sim.storageRequests;
    },
    seedFinishedScans: (domains) => domains.map((domain) => sim.scans.createFinished(domain).uuid),
    createReport: (reportName, person) => {
      sim.reports.add(reportName, person);
    },
    scriptReportName: (reportName) => sim.reports.scriptName(reportName),
    requestCount: (route) => sim.counts.get(route.trim().replace(/\s+/, ' ')) ?? 0,
    close,
  };
}
