/**
 * One step of `npm run bench -- scale` at one size, in its own process so its peak memory is its
 * own. The setup (objects the step reads) is written at loopback speed; the step itself runs with
 * S3_LATENCY_MS added to every S3 request, as from a Lambda function, and prints one JSON line:
 * wall seconds, S3 requests, peak RSS, and the bytes of what the step returns into the state.
 *
 * S3_PUT_STANDIN=1 answers the PUTs of per-person request objects in-process after the same
 * latency instead of writing them to s3rver, which stores only ~150-200 small objects a second
 * on this machine (a 100,000-row watchlist would measure s3rver, not the step). Everything else
 * (the watchlist read, items.json, rows.json) still goes to s3rver.
 */
import { Readable } from 'node:stream';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ZipFile } from 'yazl';
import { createBreachSettings } from '#lambdas/breach/deps';
import { reportFolder } from '#lambdas/breach/identity';
import { reconcileReports } from '#lambdas/breach/reconcile';
import { verifyStoredZip } from '#lambdas/breach/zip/zip-verify';
import { prepareDomainList } from '#lambdas/domain-list/list';
import { forEachBounded } from '#lambdas/platform/bounded';
import { NO_METRICS } from '#lambdas/platform/metrics';
import { BreachClient } from '#lambdas/platform/vendor-api/breach-client';
import { prepareWatchlist } from '#lambdas/watchlist/watchlist-run';
import { createS3rverClient } from '../local/embedded-s3.ts';

const [kind, sizeText] = process.argv.slice(2);
const size = Number(sizeText);
const endpoint = process.env.S3_ENDPOINT ?? '';
const BUCKET = process.env.S3_BUCKET ?? 'bench-scale';
const latencyMs = Number(process.env.S3_LATENCY_MS ?? 25);
const standIn = process.env.S3_PUT_STANDIN === '1';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const IDENTITY_KEY = 'bench-identity-key-0123456789abcdef-0123456789';

const setup = createS3rverClient(endpoint, 8);
const requests = { count: 0 };
const s3 = createS3rverClient(endpoint, 64, {
  latency: { meanMs: latencyMs, jitterMs: latencyMs / 5 },
  requests,
});
if (standIn) {
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: string }).Key ?? '';
      if (context.commandName !== 'PutObjectCommand' || !key.includes('/requests/row-')) return next(args);
      return {
        response: { statusCode: 200, headers: { etag: '"standin"' }, body: Readable.from([]) },
        output: { $metadata: { httpStatusCode: 200 }, ETag: '"standin"' },
      };
    },
    // After the latency (same step, added later): the request is counted and waits like the rest.
    { step: 'finalizeRequest', name: 'putStandIn', priority: 'low' },
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

/** Prepares what the step reads, then returns the step. */
async function prepare(): Promise<() => Promise<unknown>> {
  const run = `${kind}-${size}-${Date.now()}`;
  switch (kind) {
    case 'list-prepare': {
      const key = `incoming/${run}.txt`;
      await put(key, Array.from({ length: size }, (_, i) => `host-${i}.bench-scale.net`).join('\n'));
      return () =>
        prepareDomainList(
          {
            s3,
            logger: quiet,
            settings: { resultsBucket: BUCKET, inputBucket: BUCKET, maxDomains: 100_000 },
          },
          { source: { type: 's3', bucket: BUCKET, key } } as Parameters<typeof prepareDomainList>[1],
        );
    }
    case 'watchlist-prepare': {
      const key = `watchlists/${run}.csv`;
      await put(
        key,
        Array.from({ length: size }, (_, i) => `Person ${i},person${i}@bench-scale.net`).join('\n'),
      );
      return () =>
        prepareWatchlist(
          {
            s3,
            logger: quiet,
            clock: () => new Date(),
            settings: {
              resultsBucket: BUCKET,
              maxEmails: 50,
              maxWatchlistRows: 100_000,
              maxWatchlistBytes: 100 * 1024 * 1024,
            },
            identityKey: async () => IDENTITY_KEY,
          },
          { source: { type: 's3', bucket: BUCKET, key } },
        );
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
        await put(`${reportFolder(name)}manifest.json`, '{}');
      });
      const client = new BreachClient({
        baseUrl: process.env.BREACH_API_URL ?? '',
        credentials: async () => process.env.VENDOR_API_KEY ?? '',
      });
      const deps = {
        s3,
        breachClient: client,
        logger: quiet,
        settings: createBreachSettings({ resultsBucket: BUCKET }),
        metrics: NO_METRICS,
        clock: () => new Date(),
      };
      const started = Date.now();
      return async () =>
        (await reconcileReports(deps, { timeLeftMs: () => 900_000 - (Date.now() - started) })).counts;
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
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
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
    standIn,
  })}\n`,
);
process.exit(0);
