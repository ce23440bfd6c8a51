/**
 * One read of a scan listing of `<MiB>` MiB of empty entries (`{"scans":[{},{},…]}`), served by
 * the simulator in this process, read the way reconciliation reads it: `streamed` (the listing's
 * text, one entry at a time: readScanListingText) or `parsed` (the whole answer parsed, then
 * read: the reader before it streamed, kept as the baseline). Prints one JSON line: the entries,
 * the unreadable count and sample, and this process's peak RSS and heap after the read. Run with
 * `--max-old-space-size` to read within a function's memory.
 */
import { readScanListingText } from '#lambdas/vendor-api/scan/listing-text';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { readScanListing } from '#lambdas/vendor-api/scan/scan-listing';
import { startVendorSimulator } from '#local/simulator/index';

const [mibArg = '16', mode = 'streamed'] = process.argv.slice(2);
const MiB = 1024 * 1024;
const entries = Math.floor((Number(mibArg) * MiB - 12) / 3);
const body = `{"scans":[${'{},'.repeat(entries - 1)}{}]}`;

const sim = await startVendorSimulator({});
sim.addFault({
  api: 'scan',
  method: 'GET',
  path: '/scans',
  fault: { type: 'status', status: 200, body, contentType: 'application/json' },
});
const client = new ScanClient({
  baseUrl: sim.url,
  credentials: async () => sim.apiKey,
  idleTimeoutMs: 60_000,
});
const started = performance.now();
const listing =
  mode === 'parsed'
    ? readScanListing((await client.listScans()).raw)
    : readScanListingText((await client.listScansText()).text);
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify({
    mode,
    mib: Number(mibArg),
    entries: listing.entries,
    unreadable: listing.unreadableCount,
    sample: listing.unreadable.length,
    seconds,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    heapUsedMiB: process.memoryUsage().heapUsed / MiB,
  })}\n`,
);
await client.close();
await sim.close();
