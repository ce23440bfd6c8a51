/**
 * The vendors of the scale bench's reconciliation and archive cases, each the measurement's own
 * (what it holds would show in every later listing), filled in-process before the worker starts.
 */
import { ZipFile } from 'yazl';
import { startVendorSimulator, type VendorSimulator } from '../local/simulator/index.ts';
import { benchReportNames } from './scale-reconcile.ts';

/** A ZIP of `entries` records, half of them deflated, as a breach report the vendor serves. */
async function reportZip(entries: number): Promise<Buffer> {
  const zip = new ZipFile();
  for (let i = 0; i < entries; i += 1) {
    zip.addBuffer(Buffer.from(`record ${i}: ${'breach data '.repeat(80)}\n`), `records/${i}.txt`, {
      compress: i % 2 === 0,
    });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * A breach vendor of the measurement's own (its reports would show in every later listing): for a
 * backlog, `size` reports; for ArchiveReport, one report whose download is a ZIP of `size` entries.
 */
export async function breachVendorFor(kind: string, size: number): Promise<VendorSimulator | undefined> {
  if (kind !== 'breach-reconcile' && kind !== 'archive-report') return undefined;
  const vendor = await startVendorSimulator();
  if (kind === 'breach-reconcile') {
    for (const name of benchReportNames(size)) vendor.createReport(name);
    return vendor;
  }
  const [name = ''] = benchReportNames(1);
  vendor.createReport(name);
  vendor.addFault({
    api: 'storage',
    path: `/reports/${name}`,
    times: 1,
    fault: {
      type: 'status',
      status: 200,
      contentType: 'application/zip',
      bodyBase64: (await reportZip(size)).toString('base64'),
    },
  });
  return vendor;
}

/** The domains of the scan reconciliation case: `size` scans, `perDomain` scans to a domain. */
function scanReconcileDomains(size: number, perDomain: number): string[] {
  return Array.from({ length: size }, (_, i) => `host-${Math.floor(i / perDomain)}.bench-scale.net`);
}

/** Scans a domain in each scan reconciliation case (bench/scale-worker.ts runs them). */
const SCANS_PER_DOMAIN = { 'scan-reconcile': 10, 'scan-reconcile-spread': 1 } as const;

/**
 * A scan vendor holding `size` finished scans for the scan reconciliation cases, seeded without a
 * request: over HTTP, 100,000 scans took about 17 minutes to start and poll on this machine.
 */
export async function scanVendorFor(kind: string, size: number): Promise<VendorSimulator | undefined> {
  if (!(kind in SCANS_PER_DOMAIN)) return undefined;
  const vendor = await startVendorSimulator({ pollsToFinish: 0, reportBytes: 8 * 1024 });
  vendor.seedFinishedScans(
    scanReconcileDomains(size, SCANS_PER_DOMAIN[kind as keyof typeof SCANS_PER_DOMAIN]),
  );
  return vendor;
}
