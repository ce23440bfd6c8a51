/**
 * One large scan output in its own process, so its peak RSS is the fetch path's own: the
 * vendor (SCAN_API_URL, the simulator, generating the report lazily) and the embedded S3
 * (S3_ENDPOINT, on local disk) run in bench/run.ts's process. Two modes:
 *
 * - `fetch`: the real steps: StartScan, polls until done, then FetchReport (staged multipart upload
 *   with SHA-256, multipart copy to the final key, staged version deleted), with the time of each
 *   phase taken from the S3 requests themselves (the code under test is not changed to time it);
 * - `baseline`: the same report through the same vendor client into a plain `@aws-sdk/lib-storage`
 *   `Upload` with the same part size and queue: what storing it without digest or copy costs.
 *
 * Prints one JSON line with the figures.
 */
import { randomUUID } from 'node:crypto';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createScanDeps } from '#lambdas/scan/deps';
import { fetchScanOutput, SCAN_STAGING_PREFIX } from '#lambdas/scan/fetch-scan-output';
import { pollScanStatus } from '#lambdas/scan/poll-scan-status';
import { SCAN_OUTPUTS, type ScanOutput } from '#lambdas/scan/scan-outputs';
import { createScanSettings } from '#lambdas/scan/settings';
import { startScan } from '#lambdas/scan/start-scan';
import { type OutputOptions, ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { createS3rverClient, recordS3Commands } from '../local/services/s3/embedded-s3.ts';

const mode = process.argv[2];
const baseUrl = process.env.SCAN_API_URL ?? '';
const apiKey = process.env.VENDOR_API_KEY ?? '';
const bucket = process.env.S3_BUCKET ?? '';
if ((mode !== 'fetch' && mode !== 'baseline') || !baseUrl || !bucket || !process.env.S3_ENDPOINT) {
  process.stderr.write(
    'usage: SCAN_API_URL=... VENDOR_API_KEY=... S3_ENDPOINT=... S3_BUCKET=... big-output-worker.ts fetch|baseline\n',
  );
  process.exit(2);
}
// S3_LATENCY_MS (the scale bench): each S3 request waits as long as from a Lambda function.
const latencyMs = Number(process.env.S3_LATENCY_MS ?? 0);
const s3 = createS3rverClient(
  process.env.S3_ENDPOINT,
  undefined,
  latencyMs > 0 ? { latency: { meanMs: latencyMs, jitterMs: latencyMs / 5 } } : {},
);
const commands = recordS3Commands(s3);
/** Each S3 request's command, key and when it was sent and answered (ms on performance.now()). */
const timeline: { command: string; key: string; sent: number; answered: number }[] = [];
s3.middlewareStack.add(
  (next, context) => async (args) => {
    const sent = performance.now();
    const key = String((args.input as { Key?: unknown }).Key ?? '');
    try {
      return await next(args);
    } finally {
      timeline.push({ command: String(context.commandName), key, sent, answered: performance.now() });
    }
  },
  { step: 'initialize', name: 'bigOutputTimeline' },
);
const vendor = new ScanClient({ baseUrl, credentials: async () => apiKey, idleTimeoutMs: 120_000 });
// The simulator's JSON generator runs at about 10 MiB/s on these machines (twice per output); a
// plain byte server (REPORT_URL) serves the report itself, through the same vendor HTTP client.
const reports = process.env.REPORT_URL
  ? new ScanClient({
      baseUrl: process.env.REPORT_URL,
      credentials: async () => apiKey,
      idleTimeoutMs: 120_000,
    })
  : vendor;
const scanClient = {
  startScan: (domain: string) => vendor.startScan(domain),
  getStatus: (uuid: string) => vendor.getStatus(uuid),
  // Any output of the table: the report from the byte server, the others from the simulator.
  getOutput: (output: ScanOutput, uuid: string, options?: OutputOptions) =>
    (output.name === 'report' ? reports : vendor).getOutput(output, uuid, options),
  deleteScan: (uuid: string) => vendor.deleteScan(uuid),
  listScans: () => vendor.listScans(),
  close: async () => {
    await vendor.close();
    if (reports !== vendor) await reports.close();
  },
};
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
let now = Date.now();
const deps = createScanDeps({
  s3,
  scanClient,
  logger: quiet,
  // Above the 1 GiB default cap: raised as a deployment expecting outputs this large would raise it.
  settings: createScanSettings({ resultsBucket: bucket, maxOutputBytes: 64 * 1024 ** 3 }),
  clock: () => new Date(now),
});

if (mode === 'baseline') {
  const upload = deps.settings.upload;
  const readyRssKiB = process.memoryUsage().rss / 1024;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const reportRow = SCAN_OUTPUTS.find((output) => output.name === 'report');
  if (reportRow === undefined) throw new Error('the scan outputs table has no report row');
  const download = await reports.getOutput(reportRow, randomUUID(), {
    maxBytes: deps.settings.maxOutputBytes,
  });
  await new Upload({
    client: s3,
    params: {
      Bucket: bucket,
      Key: 'baseline/report.json',
      Body: download.body,
      ContentType: 'application/json',
    },
    partSize: upload.partSizeBytes,
    queueSize: upload.queueSize,
  }).done();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  // Counted afterwards, so the baseline's stream carries no listener the fetch path does not have.
  const bytes = (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'baseline/report.json' })))
    .ContentLength;
  await scanClient.close();
  s3.destroy();
  process.stdout.write(
    `${JSON.stringify({ mode, key: 'baseline/report.json', bytes, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, readyRssMiB: readyRssKiB / 1024, peakRssMiB: process.resourceUsage().maxRSS / 1024 })}\n`,
  );
  process.exit(0);
}

let state = await startScan(deps, { domain: 'big-output.example.com' });
for (let i = 0; i < 20 && state.status?.state !== 'succeeded'; i++) {
  now += state.poll.nextWaitSeconds * 1000;
  state = await pollScanStatus(deps, state);
}
if (state.status?.state !== 'succeeded') throw new Error(`the scan did not succeed: ${state.status?.state}`);

const readyRssKiB = process.memoryUsage().rss / 1024;
const started = performance.now();
const cpuBefore = process.cpuUsage();
const before = commands.length;
const stored = await fetchScanOutput(deps, { ...state, output: 'report' });
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const peakRssKiB = process.resourceUsage().maxRSS;

// The phases, from the requests: the staged upload ends with its CompleteMultipartUpload; the
// promotion runs from the final key's CreateMultipartUpload to its CompleteMultipartUpload.
const ofFetch = timeline.filter((entry) => entry.sent >= started);
const stagedComplete = ofFetch.find(
  (entry) => entry.command === 'CompleteMultipartUploadCommand' && entry.key.startsWith(SCAN_STAGING_PREFIX),
);
const copyCreate = ofFetch.find(
  (entry) => entry.command === 'CreateMultipartUploadCommand' && entry.key === stored.key,
);
const copyComplete = ofFetch.find(
  (entry) => entry.command === 'CompleteMultipartUploadCommand' && entry.key === stored.key,
);
const phases =
  stagedComplete && copyCreate && copyComplete
    ? {
        uploadSeconds: (stagedComplete.answered - started) / 1000,
        copySeconds: (copyComplete.answered - copyCreate.sent) / 1000,
        // s3rver's own share of the copy: assembling the copied parts into the final object.
        copyCompleteSeconds: (copyComplete.answered - copyComplete.sent) / 1000,
      }
    : undefined;

const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: stored.key }));
const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: state.outputPrefix }));
const stagedLeft = await s3.send(
  new ListObjectsV2Command({ Bucket: bucket, Prefix: `${SCAN_STAGING_PREFIX}${state.outputPrefix}` }),
);
const requests: Record<string, number> = {};
for (const command of commands.slice(before)) {
  const name = command.replace(/Command$/, '');
  requests[name] = (requests[name] ?? 0) + 1;
}
await scanClient.close();
s3.destroy();
process.stdout.write(
  `${JSON.stringify({
    mode,
    ...phases,
    key: stored.key,
    bytes: stored.size,
    sha256: stored.sha256,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    payloadBytes: Buffer.byteLength(JSON.stringify(stored)),
    readyRssMiB: readyRssKiB / 1024,
    peakRssMiB: peakRssKiB / 1024,
    requests,
    metadataSha256: head.Metadata?.sha256,
    headBytes: head.ContentLength,
    keysUnderPrefix: (listed.Contents ?? []).map((object) => object.Key),
    stagedLeftovers: (stagedLeft.Contents ?? []).length,
  })}\n`,
);
