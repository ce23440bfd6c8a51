/**
 * Scan reconciliation at scale: the simulator holds a backlog of finished scans nobody archived
 * (several per domain), s3rver is the results bucket, and `reconcileScans` runs until the backlog
 * is archived (the per-run budget at its maximum), then once more. That last run is the daily
 * steady state: everything listed is archived already.
 *
 * Printed per run: seconds, vendor requests by route, S3 requests by command. The baseline is the
 * archiving run itself, measured in the same process: the steady state should cost a small fraction
 * of it, with no status call and no download, and about one S3 listing per domain.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { NO_METRICS } from '#lambdas/platform/metrics';
import { createScanDeps } from '#lambdas/scan/deps';
import { reconcileScans, type ScanReconcileResult } from '#lambdas/scan/reconcile-scans';
import { reconcileSettingsSchema } from '#lambdas/scan/reconcile-settings';
import { createScanSettings } from '#lambdas/scan/settings';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { recordS3Commands, startS3rver } from '../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../local/simulator/index.ts';

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };
const VENDOR_ROUTES = ['GET /scans', 'GET /status/{uuid}', 'GET /report/{uuid}'] as const;

export interface ReconcileRunFigures {
  readonly label: string;
  readonly seconds: number;
  readonly counts: ScanReconcileResult['counts'];
  readonly vendor: Readonly<Record<(typeof VENDOR_ROUTES)[number], number>>;
  readonly s3: Readonly<Record<string, number>>;
}

export async function measureReconciliation(
  domains: number,
  scansPerDomain: number,
): Promise<ReconcileRunFigures[]> {
  const simulator = await startVendorSimulator({
    pollsToFinish: 0,
    reportBytes: 8 * 1024,
    debugBytes: 2 * 1024,
  });
  const s3 = await startS3rver({ buckets: [], maxSockets: 256 });
  const client = new ScanClient({ baseUrl: simulator.url, credentials: async () => simulator.apiKey });
  const bucket = 'bench-reconcile';
  try {
    await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
    for (let d = 0; d < domains; d++) {
      for (let s = 0; s < scansPerDomain; s++) {
        const { uuid } = await client.startScan(`host${d}.example.com`);
        await client.getStatus(uuid);
      }
    }
    const runs: ReconcileRunFigures[] = [];
    const once = async (label: string) => {
      const s3Client = s3.createClient();
      const commands = recordS3Commands(s3Client);
      const before = Object.fromEntries(VENDOR_ROUTES.map((route) => [route, simulator.requestCount(route)]));
      const started = process.hrtime.bigint();
      const result = await reconcileScans({
        ...createScanDeps({
          s3: s3Client,
          scanClient: client,
          logger: QUIET,
          metrics: NO_METRICS,
          settings: createScanSettings({ resultsBucket: bucket }),
        }),
        inventory: client,
        reconcile: reconcileSettingsSchema.parse({ minAgeSeconds: 0, maxArchivesPerRun: 500 }),
      });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const s3Counts: Record<string, number> = {};
      for (const command of commands) {
        const name = command.replace(/Command$/, '');
        s3Counts[name] = (s3Counts[name] ?? 0) + 1;
      }
      runs.push({
        label,
        seconds,
        counts: result.counts,
        vendor: Object.fromEntries(
          VENDOR_ROUTES.map((route) => [route, simulator.requestCount(route) - (before[route] ?? 0)]),
        ) as ReconcileRunFigures['vendor'],
        s3: s3Counts,
      });
      return result;
    };
    let run = 1;
    while ((await once(`archiving run ${run}`)).counts.deferred > 0) run += 1;
    await once('steady state');
    return runs;
  } finally {
    await client.close();
    await simulator.close();
    await s3.close();
  }
}
