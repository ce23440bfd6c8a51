/**
 * One step of `npm run bench -- scale` at one size, in its own process so its peak memory is its
 * own. The setup (objects the step reads) is written at loopback speed; the step itself runs with
 * S3_LATENCY_MS added to every S3 request, as from a Lambda function, and prints one JSON line:
 * wall seconds, S3 requests, peak RSS, and the bytes of what the step returns into the state.

 */
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ZipFile } from 'yazl';
import { createBreachSettings } from '#lambdas/breach/deps';
import { reportFolder } from '#lambdas/breach/identity';
import { reconcileReports } from '#lambdas/breach/reconcile-breach-reports';
import { BreachClient } from '#lambdas/breach/vendor-api/breach-client';
import { verifyStoredZip } from '#lambdas/breach/zip/zip-verify';
import { prepareDomainList } from '#lambdas/domain-list/prepare-domain-list';
import { writeListSummary } from '#lambdas/domain-list/write-list-summary';
import { forEachBounded } from '#lambdas/platform/bounded';
import { NO_METRICS } from '#lambdas/platform/metrics';
import { scanOutputPrefix } from '#lambdas/platform/naming';
import { readOriginsEnv } from '#lambdas/platform/runtime/env';
import { ENV } from '#lambdas/platform/runtime/variables';
import { createScanDeps } from '#lambdas/scan/deps';
import { reconcileScans } from '#lambdas/scan/reconcile-scans';
import { reconcileSettingsSchema } from '#lambdas/scan/reconcile-settings';
import { createScanSettings } from '#lambdas/scan/settings';
import { ScanClient } from '#lambdas/scan/vendor-api/scan-client';
import { readScanListing } from '#lambdas/scan/vendor-api/scan-listing';
import { MANIFEST_FILE } from '#lambdas/scan/write-scan-manifest';
import { prepareWatchlist } from '#lambdas/watchlist/prepare-watchlist';
import { writeWatchlistSummary } from '#lambdas/watchlist/write-watchlist-summary';
import { createS3rverClient } from '../local/embedded-s3.ts';

/** The bench's report naming key (a deployed stack keeps its own in Secrets Manager). */
const BENCH_REPORT_NAMING_KEY = 'bench-report-naming-key-0123456789abcdef-01';

const [kind, sizeText] = process.argv.slice(2);
const size = Number(sizeText);
const endpoint = process.env.S3_ENDPOINT ?? '';
const BUCKET = process.env.S3_BUCKET ?? 'bench-scale';
const latencyMs = Number(process.env.S3_LATENCY_MS ?? 25);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const IDENTITY_KEY = 'bench-identity-key-0123456789abcdef-0123456789';

const setup = createS3rverClient(endpoint, 8);
const requests = { count: 0 };
const s3 = createS3rverClient(endpoint, 64, {
  latency: { meanMs: latencyMs, jitterMs: latencyMs / 5 },
  requests,
});
// A failure names the command that failed: an SDK error alone does not say which request it was.
for (const [client, role] of [
  [setup, 'setup'],
  [s3, 'step'],
] as const) {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (error instanceof Error) error.message = `${role} ${context.commandName}: ${error.message}`;
        throw error;
      }
    },
    { step: 'initialize', name: 'nameFailedCommand' },
  );
}
/** s3rver answers InternalError now and then under a burst of writes: the setup tries again. */
async function put(key: string, body: string | Buffer, attempt = 1): Promise<void> {
  try {
    await setup.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  } catch (error) {
    if (attempt >= 6) throw error;
    await new Promise((done) => setTimeout(done, 50 * attempt));
    await put(key, body, attempt + 1);
  }
}

/** The bytes of an object the step wrote or reads (items.json against the ItemReader's limit). */
let itemsKey: string | undefined;
async function sizeOf(key: string): Promise<number> {
  return (await setup.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))).ContentLength ?? 0;
}

/**
 * What the Distributed Map's ResultWriter leaves for a summary: a manifest naming result files of
 * `{ Input, Output }` entries (strings, as Step Functions writes them), here one file of them.
 */
async function writeMapResults(run: string, entries: { Input: string; Output: string }[]): Promise<string> {
  const file = `map-results/${run}/SUCCEEDED_0.json`;
  await put(file, JSON.stringify(entries));
  const manifestKey = `map-results/${run}/manifest.json`;
  await put(manifestKey, JSON.stringify({ ResultFiles: { SUCCEEDED: [{ Key: file, Size: 0 }] } }));
  return manifestKey;
}

const listDeps = (client: typeof s3) => ({
  s3: client,
  logger: quiet,
  settings: { resultsBucket: BUCKET, inputBucket: BUCKET, maxDomains: 100_000 },
});
const watchlistDeps = (client: typeof s3) => ({
  s3: client,
  logger: quiet,
  clock: () => new Date(),
  settings: {
    resultsBucket: BUCKET,
    maxEmails: 50,
    maxWatchlistRows: 100_000,
    maxWatchlistBytes: 100 * 1024 * 1024,
  },
  identityKey: async () => IDENTITY_KEY,
});

/** Prepares what the step reads, then returns the step. */
async function prepare(): Promise<() => Promise<unknown>> {
  const run = `${kind}-${size}-${Date.now()}`;
  switch (kind) {
    case 'list-prepare': {
      const key = `incoming/${run}.txt`;
      await put(key, Array.from({ length: size }, (_, i) => `host-${i}.bench-scale.net`).join('\n'));
      return () =>
        prepareDomainList(listDeps(s3), { source: { type: 's3', bucket: BUCKET, key } } as Parameters<
          typeof prepareDomainList
        >[1]);
    }
    case 'watchlist-prepare': {
      const key = `watchlists/${run}.csv`;
      await put(
        key,
        Array.from({ length: size }, (_, i) => `Person ${i},person${i}@bench-scale.net`).join('\n'),
      );
      return () => prepareWatchlist(watchlistDeps(s3), { source: { type: 's3', bucket: BUCKET, key } });
    }
    case 'list-summary': {
      const key = `incoming/${run}.txt`;
      await put(key, Array.from({ length: size }, (_, i) => `host-${i}.bench-scale.net`).join('\n'));
      const prepared = await prepareDomainList(listDeps(setup), {
        source: { type: 's3', bucket: BUCKET, key },
      } as Parameters<typeof prepareDomainList>[1]);
      itemsKey = prepared.itemsKey;
      const items = JSON.parse(
        (await (
          await setup.send(new GetObjectCommand({ Bucket: BUCKET, Key: prepared.itemsKey }))
        ).Body?.transformToString()) ?? '[]',
      ) as { domain: string; executionName: string }[];
      // Every domain scanned: what ReportOneDomain returns for a child that succeeded.
      const manifestKey = await writeMapResults(
        run,
        items.map((item, i) => ({
          Input: JSON.stringify(item),
          Output: JSON.stringify({
            domain: item.domain,
            executionName: item.executionName,
            output: {
              domain: item.domain,
              state: 'succeeded',
              scanUuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
              outputPrefix: `scans/${item.domain}/2026/11/24/x/`,
              manifestKey: `scans/${item.domain}/2026/11/24/x/manifest.json`,
            },
          }),
        })),
      );
      return () =>
        writeListSummary(listDeps(s3), {
          ...prepared,
          mapResult: { ResultWriterDetails: { Bucket: BUCKET, Key: manifestKey } },
        } as Parameters<typeof writeListSummary>[1]);
    }
    case 'watchlist-summary': {
      const key = `watchlists/${run}.csv`;
      await put(
        key,
        Array.from({ length: size }, (_, i) => `Person ${i},person${i}@bench-scale.net`).join('\n'),
      );
      const prepared = await prepareWatchlist(watchlistDeps(setup), {
        source: { type: 's3', bucket: BUCKET, key },
      });
      itemsKey = prepared.itemsKey;
      const items = JSON.parse(
        (await (
          await setup.send(new GetObjectCommand({ Bucket: BUCKET, Key: prepared.itemsKey }))
        ).Body?.transformToString()) ?? '[]',
      ) as { row: number; executionName: string }[];
      // Every person archived: what ReportOnePerson returns for a child that succeeded.
      const manifestKey = await writeMapResults(
        run,
        items.map((item) => ({
          Input: JSON.stringify(item),
          Output: JSON.stringify({
            executionName: item.executionName,
            output: { manifestKey: `breach/people/p-${item.row}/r/manifest.json` },
          }),
        })),
      );
      return () =>
        writeWatchlistSummary(watchlistDeps(s3), {
          ...prepared,
          mapResult: { ResultWriterDetails: { Bucket: BUCKET, Key: manifestKey } },
        });
    }
    case 'zip-verify': {
      const zip = new ZipFile();
      for (let i = 0; i < size; i += 1) {
        zip.addBuffer(Buffer.from(`record ${i}: ${'breach data '.repeat(80)}\n`), `records/${i}.txt`, {
          compress: i % 2 === 0,
        });
      }
      zip.end();
      const chunks: Buffer[] = [];
      for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
      const body = Buffer.concat(chunks);
      const key = `zips/${run}.zip`;
      await put(key, body);
      return async () => {
        const verified = await verifyStoredZip(s3, { bucket: BUCKET, key, size: body.length });
        return {
          entryCount: verified.entries.length,
          totalUncompressedBytes: verified.totalUncompressedBytes,
        };
      };
    }
    case 'breach-reconcile': {
      // The simulator (bench/scale.ts) lists `size` reports; all but the last 30 are archived already.
      const names = Array.from({ length: size }, (_, i) => `person-${i}_20261120T100000Z_s${size}`);
      await forEachBounded(names.slice(0, -30), 4, async (name) => {
        await put(`${reportFolder(name, BENCH_REPORT_NAMING_KEY)}manifest.json`, '{}');
      });
      const client = new BreachClient({
        baseUrl: process.env.BREACH_API_URL ?? '',
        allowedOrigins: readOriginsEnv(process.env, ENV.vendorAllowedOrigins),
        credentials: async () => process.env.VENDOR_API_KEY ?? '',
      });
      const deps = {
        s3,
        breachClient: client,
        logger: quiet,
        settings: createBreachSettings({ resultsBucket: BUCKET }),
        metrics: NO_METRICS,
        clock: () => new Date(),
        reportNamingKey: async () => BENCH_REPORT_NAMING_KEY,
      };
      const started = Date.now();
      return async () =>
        (await reconcileReports(deps, { timeLeftMs: () => 900_000 - (Date.now() - started) })).counts;
    }
    case 'scan-reconcile':
    case 'scan-reconcile-spread': {
      // The vendor (a simulator of this measurement's own) lists `size` finished scans, ten a
      // domain (or one: `-spread`); all but the last 30 are archived already, as on an ordinary day.
      const perDomain = kind === 'scan-reconcile-spread' ? 1 : 10;
      const client = new ScanClient({
        baseUrl: process.env.SCAN_API_URL ?? '',
        credentials: async () => process.env.VENDOR_API_KEY ?? '',
      });
      await forEachBounded(
        Array.from({ length: size }, (_, i) => `host-${Math.floor(i / perDomain)}.bench-scale.net`),
        8,
        async (domain) => {
          const { uuid } = await client.startScan(domain);
          await client.getStatus(uuid);
        },
      );
      const settings = createScanSettings({ resultsBucket: BUCKET });
      const reconcile = reconcileSettingsSchema.parse({ minAgeSeconds: 0 });
      const listed = readScanListing(
        (await client.listScans()).raw,
        reconcile.listFields,
        settings.statusVocabulary,
      );
      if (listed.scans.length !== size)
        throw new Error(`the vendor lists ${listed.scans.length} scans, not ${size}`);
      await forEachBounded(listed.scans.slice(0, -30), 8, async (scan) => {
        const prefix = scanOutputPrefix(scan.domain, scan.createdAt ?? new Date(), scan.uuid);
        await put(`${prefix}${MANIFEST_FILE}`, '{}');
      });
      const deps = {
        ...createScanDeps({ s3, scanClient: client, logger: quiet, metrics: NO_METRICS, settings }),
        inventory: client,
        reconcile,
      };
      const started = Date.now();
      return async () =>
        (await reconcileScans(deps, { timeLeftMs: () => 900_000 - (Date.now() - started) })).counts;
    }
    default:
      throw new Error(`unknown case ${kind}`);
  }
}

const step = await prepare();
requests.count = 0;
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);
const cpuBefore = process.cpuUsage();
const started = performance.now();
const output = await step();
const itemsKeyOut = (output as { itemsKey?: unknown } | undefined)?.itemsKey;
if (typeof itemsKeyOut === 'string') itemsKey = itemsKeyOut;
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
const itemsBytes = itemsKey === undefined ? undefined : await sizeOf(itemsKey);
setup.destroy();
s3.destroy();
process.stdout.write(
  `${JSON.stringify({
    kind,
    size,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    requests: requests.count,
    peakRssMiB: peakRss / 2 ** 20,
    payloadBytes: Buffer.byteLength(JSON.stringify(output)),
    itemsBytes,
  })}\n`,
);
process.exit(0);
