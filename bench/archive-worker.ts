/**
 * One archive measurement in its own process, so its peak RSS is its own: the vendor (BREACH_API_URL,
 * the simulator) and the embedded S3 (S3_ENDPOINT) both run in bench/run.ts's process.
 *
 * - `archive`: the workflow's archiveReport (staged multipart upload with SHA-256, ranged-read ZIP
 *   verification of every entry's CRC, promotion copy, manifest);
 * - `baseline`: the same download streamed into a plain `@aws-sdk/lib-storage` Upload, same parts.
 *
 * Prints one JSON line: seconds, bytes, the peak RSS growth over the process's RSS once ready,
 * and for `archive` the seconds spent verifying.
 */
import { Upload } from '@aws-sdk/lib-storage';
import { archiveReport } from '#lambdas/breach/archive-breach-report';
import { createBreachSettings } from '#lambdas/breach/deps';
import { verifyStoredZip } from '#lambdas/breach/zip/zip-verify';
import { NO_METRICS } from '#lambdas/platform/metrics';
import { readOriginsEnv } from '#lambdas/platform/runtime/env';
import { ENV } from '#lambdas/platform/runtime/variables';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { createS3rverClient } from '../local/services/s3/embedded-s3.ts';

/** The bench's report naming key (a deployed stack keeps its own in Secrets Manager). */
const BENCH_REPORT_NAMING_KEY = 'bench-report-naming-key-0123456789abcdef-01';

const [mode, reportName] = process.argv.slice(2);
const baseUrl = process.env.BREACH_API_URL ?? '';
const apiKey = process.env.VENDOR_API_KEY ?? '';
if ((mode !== 'archive' && mode !== 'baseline') || !reportName || !baseUrl) {
  process.stderr.write(
    'usage: BREACH_API_URL=... VENDOR_API_KEY=... archive-worker.ts archive|baseline <report>\n',
  );
  process.exit(2);
}
const BUCKET = process.env.S3_BUCKET ?? 'bench-results';
const s3 = { client: createS3rverClient(process.env.S3_ENDPOINT ?? '') };
const client = new BreachClient({
  baseUrl,
  allowedOrigins: readOriginsEnv(process.env, ENV.vendorAllowedOrigins),
  credentials: async () => apiKey,
});
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
// The bench archives a ~1 GiB report, past the default bounds (64 MiB download, 256 MiB inflated):
// raised here as a deployment that expects reports that large would raise them.
const settings = createBreachSettings({
  resultsBucket: BUCKET,
  limits: { maxArchiveBytes: 2 * 1024 ** 3, maxUncompressedBytes: 2 * 1024 ** 3 },
});
const readyRssKiB = process.memoryUsage().rss / 1024;
const started = performance.now();
let bytes = 0;
let verifySeconds: number | undefined;
let peakAfterArchiveKiB = 0;
if (mode === 'archive') {
  const deps = {
    s3: s3.client,
    breachClient: client,
    logger: quiet,
    settings,
    metrics: NO_METRICS,
    clock: () => new Date(),
    reportNamingKey: async () => BENCH_REPORT_NAMING_KEY,
  };
  const summary = await archiveReport(deps, reportName, { origin: 'workflow' });
  bytes = summary.size;
  peakAfterArchiveKiB = process.resourceUsage().maxRSS;
  // The verification alone, once more over the stored archive: what the check costs.
  const verifyStarted = performance.now();
  await verifyStoredZip(s3.client, { bucket: BUCKET, key: summary.key, size: summary.size });
  verifySeconds = (performance.now() - verifyStarted) / 1000;
} else {
  const download = await client.download(reportName);
  download.body.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  await new Upload({
    client: s3.client,
    params: { Bucket: BUCKET, Key: 'baseline.zip', Body: download.body, ContentType: 'application/zip' },
    partSize: settings.upload.partSizeBytes,
    queueSize: settings.upload.queueSize,
  }).done();
}
const seconds = (performance.now() - started) / 1000;
// The archive's own peak: before the extra verification run, which only times the check.
const peakGrowthMiB = ((peakAfterArchiveKiB || process.resourceUsage().maxRSS) - readyRssKiB) / 1024;
await client.close();
s3.client.destroy();
process.stdout.write(`${JSON.stringify({ mode, bytes, seconds, peakGrowthMiB, verifySeconds })}\n`);
