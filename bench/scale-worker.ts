/**
 * One step of `npm run bench -- scale` at one size, in its own process so its peak memory is its
 * own. The setup (objects the step reads) is written at loopback speed; the step itself runs with
 * S3_LATENCY_MS added to every S3 request, as from a Lambda function, and prints one JSON line:
 * wall seconds, S3 requests, peak RSS, and the bytes of what the step returns into the state.

 */
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { prepareDomainList } from '#lambdas/domain-list/prepare-domain-list';
import { writeListSummary } from '#lambdas/domain-list/write-list-summary';
import { prepareWatchlist } from '#lambdas/watchlist/prepare-watchlist';
import { writeWatchlistSummary } from '#lambdas/watchlist/write-watchlist-summary';
import { createS3rverClient } from '../local/services/s3/embedded-s3.ts';
import { listRunHistoryEvents } from './scale-history.ts';
import { archiveOneReport, breachBacklogDrain, type CaseContext, scanReconcile } from './scale-reconcile.ts';

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
const context: CaseContext = { size, bucket: BUCKET, s3, s3Directory: process.env.S3_DIRECTORY ?? '' };
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

type ListSource = { source: { type: 's3'; bucket: string; key: string } };
type PreparedList = Awaited<ReturnType<typeof prepareDomainList>>;
type PreparedWatchlist = Awaited<ReturnType<typeof prepareWatchlist>>;

/** A list of `size` domains uploaded for the run. */
async function listSource(run: string): Promise<ListSource> {
  const key = `incoming/${run}.txt`;
  await put(key, Array.from({ length: size }, (_, i) => `host-${i}.bench-scale.net`).join('\n'));
  return { source: { type: 's3', bucket: BUCKET, key } };
}

/** A watchlist of `size` people uploaded for the run. */
async function watchlistSource(run: string): Promise<ListSource> {
  const key = `watchlists/${run}.csv`;
  await put(key, Array.from({ length: size }, (_, i) => `Person ${i},person${i}@bench-scale.net`).join('\n'));
  return { source: { type: 's3', bucket: BUCKET, key } };
}

async function readItems<T>(key: string): Promise<T[]> {
  const object = await setup.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return JSON.parse((await object.Body?.transformToString()) ?? '[]') as T[];
}

/** Every domain scanned: what ReportOneDomain returns for each child that succeeded. */
async function listMapResults(prepared: PreparedList, run: string): Promise<string> {
  const items = await readItems<{ domain: string; executionName: string }>(prepared.itemsKey);
  return writeMapResults(
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
}

/** Every person archived: what ReportOnePerson returns for each child that succeeded. */
async function watchlistMapResults(prepared: PreparedWatchlist, run: string): Promise<string> {
  const items = await readItems<{ row: number; executionName: string }>(prepared.itemsKey);
  return writeMapResults(
    run,
    items.map((item) => ({
      Input: JSON.stringify(item),
      Output: JSON.stringify({
        executionName: item.executionName,
        output: { manifestKey: `breach/people/p-${item.row}/r/manifest.json` },
      }),
    })),
  );
}

const prepareList = (client: typeof s3, input: ListSource) =>
  prepareDomainList(listDeps(client), input as Parameters<typeof prepareDomainList>[1]);

/** The list or watchlist run the step belongs to, through its state machine (for the history column). */
let parentRun: (() => Promise<number>) | undefined;

/** Prepares what the step reads, then returns the step. */
async function prepare(): Promise<() => Promise<unknown>> {
  const run = `${kind}-${size}-${Date.now()}`;
  const mapResult = (Key: string) => ({ ResultWriterDetails: { Bucket: BUCKET, Key } });
  if (kind?.startsWith('list-')) {
    const input = await listSource(run);
    parentRun = () =>
      listRunHistoryEvents('list', input, {
        prepare: (event) => prepareList(setup, event as ListSource),
        map: async (prepared) => mapResult(await listMapResults(prepared as PreparedList, `${run}-history`)),
        summarize: (event) =>
          writeListSummary(listDeps(setup), event as Parameters<typeof writeListSummary>[1]),
      });
    if (kind === 'list-prepare') return () => prepareList(s3, input);
    const prepared = await prepareList(setup, input);
    itemsKey = prepared.itemsKey;
    const manifestKey = await listMapResults(prepared, run);
    return () => writeListSummary(listDeps(s3), { ...prepared, mapResult: mapResult(manifestKey) } as never);
  }
  if (kind?.startsWith('watchlist-')) {
    const input = await watchlistSource(run);
    parentRun = () =>
      listRunHistoryEvents('watchlist', input, {
        prepare: (event) => prepareWatchlist(watchlistDeps(setup), event as ListSource),
        map: async (prepared) =>
          mapResult(await watchlistMapResults(prepared as PreparedWatchlist, `${run}-history`)),
        summarize: (event) => writeWatchlistSummary(watchlistDeps(setup), event as never),
      });
    if (kind === 'watchlist-prepare') return () => prepareWatchlist(watchlistDeps(s3), input);
    const prepared = await prepareWatchlist(watchlistDeps(setup), input);
    itemsKey = prepared.itemsKey;
    const manifestKey = await watchlistMapResults(prepared, run);
    return () => writeWatchlistSummary(watchlistDeps(s3), { ...prepared, mapResult: mapResult(manifestKey) });
  }
  switch (kind) {
    case 'archive-report':
      // bench/scale.ts has the simulator serve one report: a ZIP of `size` entries.
      return archiveOneReport(context);
    case 'breach-reconcile':
      // bench/scale.ts has the simulator list `size` reports, none of them archived.
      return breachBacklogDrain(context);
    case 'scan-reconcile':
    case 'scan-reconcile-spread':
      // bench/scale.ts seeded the vendor with this case's scans a domain (SCANS_PER_DOMAIN).
      return scanReconcile(context);
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
// After the measurement: the whole run the step belongs to, through its state machine.
const historyEvents = parentRun === undefined ? undefined : await parentRun();
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
    historyEvents,
    // A backlog's drain: each scheduled run's time and archives.
    runs: (output as { runs?: unknown } | undefined)?.runs,
  })}\n`,
);
process.exit(0);
