/**
 * Least privilege, proven from both sides: every scan handler runs through the synthesized
 * ScanDomain definition (success, vendor failure, Lambda retries, delete at the vendor), then scan
 * reconciliation and the operations workflow's vendor statistics job, against the simulator and s3rver while an S3 middleware and a vendor-client wrapper record what each Task
 * state actually sent. Those calls, as IAM actions, must equal what the synthesized template grants
 * that state's function: nothing granted that no path uses, nothing used that is not granted.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordVendorStatistics } from '#lambdas/operations/vendor-stats';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import type { ScanApi } from '#lambdas/scan/deps';
import { createScanDeps } from '#lambdas/scan/deps';
import { EARLY_END_SCHEDULE, watchEarlyEndsOnce } from '#lambdas/scan/early-end-watch';
import type { ScanInventoryApi } from '#lambdas/scan/reconcile-deps';
import { reconcileScans } from '#lambdas/scan/reconcile-scans';
import { reconcileSettingsSchema } from '#lambdas/scan/reconcile-settings';
import { createScanSettings } from '#lambdas/scan/settings';
import { waitingRecordKey } from '#lambdas/scan/waiting-records';
import { declarationOf, type HandlerFile, handlerForState } from '../../lambdas/registry.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { LocalTaskTokens, WAIT_STATE } from '../../local/runner/early-end-watch.ts';
import { localStateMachine } from '../../local/runner/task-binding.ts';
import type { IamEvaluator } from '../../local/services/iam/evaluator.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import { scanDomainStateMachine } from '../../local/synth/definitions.ts';
import { cachedTemplate } from '../../local/synth/synth-cache.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { type Synthesized, synth } from '../kit/synth.ts';
import { executeScan, type Handlers, vendorClientsFor } from './harness.ts';
import { asHandler, evaluatorFor, grantedActions, recordingS3, recordUse, used } from './iam-recorder.ts';

const RESULTS = 'scan-results';
const QUICK_POLL = { minWaitSeconds: 1, maxWaitSeconds: 2, growthFactor: 1.5, deadlineSeconds: 60 };
const clock = () => new Date('2026-11-20T10:00:00.000Z');
const SCAN_HANDLERS: readonly HandlerFile[] = [
  'start-scan',
  'poll-scan-status',
  'fetch-scan-output',
  'write-scan-manifest',
  'record-scan-failure',
  'delete-scan',
  'reconcile-scans',
  // Not the scan workflow's, but the scanning API's: GET /stats through the same client.
  'record-vendor-stats',
];

/**
 * Granted actions only a path no local run can reach uses, each with the path. Listed here, not
 * silently skipped: the test still requires them to be declared and granted.
 */
const UNREACHABLE_HERE: Partial<Record<HandlerFile, Record<string, string>>> = {
  'fetch-scan-output': {
    's3:DeleteObjectVersion':
      'the staged upload and unverified leftovers are deleted by version id, which s3rver (unversioned) never returns',
    's3:AbortMultipartUpload': 'lib-storage aborts a multipart upload whose part upload failed',
    's3:GetObject':
      'HeadObject of an earlier verified output runs only when a fetch is retried after its write (test/scan/retried-fetch.test.ts)',
  },
  'reconcile-scans': {
    's3:DeleteObjectVersion':
      'the staged upload and unverified leftovers are deleted by version id, which s3rver (unversioned) never returns',
    's3:AbortMultipartUpload': 'lib-storage aborts a multipart upload whose part upload failed',
  },
  'record-vendor-stats': {
    's3:ListBucket':
      'S3 answers a GetObject of a missing previous read with 404 only to a caller holding ListBucket (AccessDenied otherwise); the evaluator checks GetObject alone',
  },
};

let evaluation: { readonly iam: IamEvaluator; readonly orgKeySecretArn: string };

/** Reading the org key secret, as the deployed handler does before a vendor call: recorded and evaluated. */
async function readKeySecret(): Promise<void> {
  recordUse('secretsmanager:GetSecretValue');
  await evaluation.iam.check('SecretsManagerClient', 'GetSecretValueCommand', {
    SecretId: evaluation.orgKeySecretArn,
  });
}

/** Every vendor call first reads that API's key secret. */
function recordingScanApi(api: ScanApi): ScanApi {
  const record = async <T>(call: () => Promise<T>): Promise<T> => {
    await readKeySecret();
    return call();
  };
  return {
    startScan: (domain) => record(() => api.startScan(domain)),
    getStatus: (uuid) => record(() => api.getStatus(uuid)),
    getOutput: (output, uuid, options) => record(() => api.getOutput(output, uuid, options)),
    deleteScan: (uuid) => record(() => api.deleteScan(uuid)),
    listScans: () => record(() => api.listScans()),
  };
}

/** The listing call scan reconciliation adds, recorded the same way. */
function recordingInventory(api: ScanInventoryApi): ScanInventoryApi {
  return {
    listScans: async () => {
      await readKeySecret();
      return api.listScans();
    },
  };
}

/** Runs each bound handler inside its state's context; the first call of each is throttled by Lambda. */
function attributed(bound: Handlers): Handlers {
  const wrapped: Handlers = {};
  for (const [state, handler] of Object.entries(bound)) {
    // The machine's own S3 integration, no handler (its grant: test/scan/early-end-watcher.cdk.test.ts).
    if (state === WAIT_STATE) {
      wrapped[state] = handler;
      continue;
    }
    let calls = 0;
    const file = handlerForState(state);
    if (!file) throw new Error(`lambdas/registry.ts maps no handler to state ${state}`);
    wrapped[state] = (input) =>
      asHandler(file, async () => {
        calls += 1;
        if (calls === 1) {
          // The one Lambda error every Task retries, StartScan included (it proves nothing ran).
          const error = new Error('Lambda.TooManyRequestsException (injected by the test)');
          error.name = 'Lambda.TooManyRequestsException';
          throw error;
        }
        return handler(input);
      });
  }
  return wrapped;
}

let s3: S3rverFixture;
let sim: VendorSimulator;
let synthesized: Synthesized;

beforeAll(async () => {
  const withDelete = parsePipelineConfig(
    { scan: { deleteAtVendorAfterManifest: true } },
    'least-privilege test',
  );
  synthesized = synth({ scan: { deleteAtVendorAfterManifest: true } });
  evaluation = evaluatorFor(synthesized, { results: RESULTS });
  // The runner's definition from the synth cache (the same synthesis scan-domain-cleanup reads);
  // the full template above is what the policies are evaluated against.
  const definition = scanDomainStateMachine(await cachedTemplate(withDelete)).definition;
  const machine = localStateMachine(definition);
  s3 = await startS3rver({ buckets: [RESULTS] });
  sim = await startVendorSimulator({
    pollsToFinish: 2,
    failingDomains: ['broken.example.com'],
    // Over one 8 MiB part: the report takes the multipart path and its sha256 copy; logs stay single-part.
    reportBytes: 9 * 1024 * 1024,
  });
  const clients = vendorClientsFor(sim);
  const setup = {
    definition,
    machine,
    s3: evaluation.iam.watch(recordingS3(s3.createClient())),
    resultsBucket: RESULTS,
    scanClient: recordingScanApi(clients.scan),
    poll: QUICK_POLL,
    logger: createMemoryLogger(),
    clock,
    wrap: attributed,
  };
  try {
    for (const domain of ['example.com', 'broken.example.com']) await executeScan(setup, domain);
    // An orphan: the vendor creates the scan and StartScan's answer is lost (ScanRejected); the
    // vendor then finishes it, and reconciliation archives it and links the rejection. The listing
    // is unreadable while StartScan settles the start, so it cannot adopt the scan.
    sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'lose-response' } });
    const blind = sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/scans',
      times: Number.POSITIVE_INFINITY,
      fault: { type: 'status', status: 503 },
    });
    await executeScan(setup, 'orphan.example.com');
    blind();
    // The early-end watcher, which the poll function also runs: a finished scan's waiting record
    // whose wait ended by itself is stale (read, released in vain, removed); a running scan's gets
    // a check marker.
    sim.scriptScan('slow.example.com', { outcome: 'never-finish' });
    const running = await clients.scan.startScan('slow.example.com');
    const finished = await clients.scan.startScan('finished.example.com');
    for (let i = 0; i < 5 && (await clients.scan.getStatus(finished.uuid)).state !== 'succeeded'; i++);
    for (const { uuid } of [running, finished]) {
      await s3.client.send(
        new PutObjectCommand({
          Bucket: RESULTS,
          Key: waitingRecordKey(uuid, '2026-11-20T09:58:00.000Z', 1, 600),
          Body: LocalTaskTokens.newToken(),
        }),
      );
    }
    const tokens = new LocalTaskTokens();
    const sfn = evaluation.iam.watch(tokens.client);
    await asHandler('poll-scan-status', () =>
      watchEarlyEndsOnce(
        {
          s3: setup.s3,
          bucket: RESULTS,
          scanClient: recordingScanApi(clients.scan),
          sfn: {
            send: (command) => {
              recordUse('states:SendTaskSuccess');
              return sfn.send(command);
            },
          },
          logger: createMemoryLogger(),
          // Two minutes after the scans started: every record's first check is due.
          clock: () => new Date(clock().getTime() + 120_000),
          sleep: async () => {},
          schedule: EARLY_END_SCHEDULE,
          concurrency: 1,
          timeBudgetMs: 60_000,
          passes: 1,
        },
        clock().getTime() + 180_000,
      ),
    );
    const listed = (await clients.scan.listScans()).raw as { scans: { uuid: string; domain: string }[] };
    const orphan = listed.scans.find((scan) => scan.domain === 'orphan.example.com');
    for (let i = 0; orphan && i < 5; i++) await clients.scan.getStatus(orphan.uuid);
    await asHandler('reconcile-scans', () =>
      reconcileScans({
        ...createScanDeps({
          s3: setup.s3,
          scanClient: recordingScanApi(clients.scan),
          logger: createMemoryLogger(),
          settings: createScanSettings({ resultsBucket: RESULTS }),
          clock: () => new Date(),
        }),
        inventory: recordingInventory(clients.scan),
        reconcile: reconcileSettingsSchema.parse({ minAgeSeconds: 0, deleteAtVendor: true }),
      }),
    );
    // Twice: the first run finds no previous read and writes the day's snapshot; the second reads
    // the previous one and finds the day's snapshot kept (its conditional write refused).
    for (const at of ['2026-11-28T01:00:00.000Z', '2026-11-28T02:00:00.000Z']) {
      await asHandler('record-vendor-stats', () =>
        recordVendorStatistics({
          s3: setup.s3,
          settings: { resultsBucket: RESULTS, statusVocabulary: undefined, statsFields: {} },
          metrics: createMetricsRecorder(),
          logger: createMemoryLogger(),
          clock: () => new Date(at),
          stats: {
            getStats: async () => {
              await readKeySecret();
              return clients.scan.getStats();
            },
          },
        }),
      );
    }
  } finally {
    await clients.close();
  }
  // Two syntheses on a cold cache (the full template, then the runner's definition), in this process.
}, 180_000);

afterAll(async () => {
  await sim?.close();
  await s3?.close();
});

describe('least privilege of the scan handlers', () => {
  it('runs against versioned buckets, which the copy and delete mappings rely on', () => {
    const buckets = Object.values(synthesized.json.Resources).filter((r) => r.Type === 'AWS::S3::Bucket');
    for (const bucket of buckets) {
      expect(bucket.Properties).toMatchObject({ VersioningConfiguration: { Status: 'Enabled' } });
    }
  });

  it('made every call with what the synthesized policies allow (evaluated as IAM would)', () => {
    const { checks, denials } = evaluation.iam.stats();
    expect(denials).toEqual([]);
    expect(checks).toBeGreaterThan(20);
  });

  it.each(SCAN_HANDLERS)('grants %s exactly the actions its runs used', (handler) => {
    const exempt = UNREACHABLE_HERE[handler] ?? {};
    const granted = grantedActions(synthesized, handler);
    const observed = used.get(handler) ?? new Set<string>();

    const unusedGrants = [...granted].filter((a) => !observed.has(a) && !(a in exempt)).sort();
    const ungrantedUses = [...observed].filter((a) => !granted.has(a)).sort();

    expect(observed.size + Object.keys(exempt).length, `${handler} ran no path`).toBeGreaterThan(0);
    expect({ unusedGrants, ungrantedUses }).toEqual({ unusedGrants: [], ungrantedUses: [] });
    for (const action of Object.keys(exempt)) expect(granted, action).toContain(action);
  });

  it.each(SCAN_HANDLERS)('declares for %s what the runs used, in lambdas/registry.ts', (handler) => {
    const declaration = declarationOf(handler);
    const declared = new Set([
      ...declaration.s3.flatMap((use) => use.actions.map((a) => `s3:${a}`)),
      ...(declaration.vendorApis.length > 0 ? ['secretsmanager:GetSecretValue'] : []),
      ...Object.values(declaration.stateMachines ?? {}).flatMap((actions) =>
        (actions ?? []).map((a) => `states:${a}`),
      ),
      ...(declaration.sendsTaskSuccess ? ['states:SendTaskSuccess'] : []),
    ]);
    expect(new Set([...(used.get(handler) ?? []), ...Object.keys(UNREACHABLE_HERE[handler] ?? {})])).toEqual(
      declared,
    );
  });
});
