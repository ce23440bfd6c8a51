/**
 * Least privilege of the breach handlers, proven from both sides as for the scan handlers: each
 * step runs against the simulator and s3rver while every S3 call, vendor call and secret read is
 * recorded as the IAM action it needs, attributed to the handler running it. Those must equal what
 * the synthesized template grants the handler's function, and what lambdas/registry.ts declares.
 */

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveRunReport } from '#lambdas/breach/archive-breach-report';
import { recon } from '#lambdas/breach/breach-recon';
import type { BreachApi, BreachDeps } from '#lambdas/breach/deps';
import { createBreachSettings } from '#lambdas/breach/deps';
import { reconcileReports } from '#lambdas/breach/reconcile-breach-reports';
import { recordBreachFailure } from '#lambdas/breach/record-breach-failure';
import { writeBreachManifest } from '#lambdas/breach/write-breach-manifest';
import type { ExecutionLookup } from '#lambdas/platform/runs/fan-out-results';
import type { RunEventPublisher } from '#lambdas/platform/runs/run-events';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import type { WatchlistDeps } from '#lambdas/watchlist/deps';
import { prepareWatchlist } from '#lambdas/watchlist/prepare-watchlist';
import type { WatchlistItem } from '#lambdas/watchlist/watchlist-shards';
import { writeWatchlistSummary } from '#lambdas/watchlist/write-watchlist-summary';
import { declarationOf, type HandlerFile } from '../../lambdas/registry.ts';
import type { IamEvaluator } from '../../local/services/iam/evaluator.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { type Synthesized, synth } from '../kit/synth.ts';
import { asHandler, evaluatorFor, grantedActions, recordingS3, recordUse, used } from './iam-recorder.ts';

const RESULTS = 'breach-results';
const INPUT = 'breach-input';
const BREACH_HANDLERS: readonly HandlerFile[] = [
  'breach-recon',
  'archive-breach-report',
  'write-breach-manifest',
  'record-breach-failure',
  'prepare-watchlist',
  'write-watchlist-summary',
  'reconcile-breach-reports',
];

/** Granted actions no local run reaches, each with the path that uses it. */
const UNREACHABLE_HERE: Partial<Record<HandlerFile, Record<string, string>>> = {
  'breach-recon': {
    's3:ListBucket': 'makes a HeadObject/GetObject of a missing claim or recon.json answer 404, not 403',
  },
  'archive-breach-report': {
    's3:ListBucket': 'ListObjectsV2 of .staging/ and 404 (not 403) for a missing manifest or archive',
    's3:AbortMultipartUpload': 'lib-storage aborts a multipart upload whose part upload failed',
  },
  'reconcile-breach-reports': {
    's3:AbortMultipartUpload': 'lib-storage aborts a multipart upload whose part upload failed',
  },
};

/** Every vendor call first reads the breach API's key secret. */
function recordingBreachApi(api: BreachApi): BreachApi {
  const record = async <T>(call: () => Promise<T>): Promise<T> => {
    recordUse('secretsmanager:GetSecretValue');
    // One org key serves every API by default: the breach API's key is that secret.
    await evaluation.iam.check('SecretsManagerClient', 'GetSecretValueCommand', {
      SecretId: evaluation.orgKeySecretArn,
    });
    return call();
  };
  return {
    recon: (request) => record(() => api.recon(request)),
    listReports: () => record(() => api.listReports()),
    download: (name) => record(() => api.download(name)),
  };
}

let s3: S3rverFixture;
let sim: VendorSimulator;
let synthesized: Synthesized;
let evaluation: { readonly iam: IamEvaluator; readonly orgKeySecretArn: string };

beforeAll(async () => {
  synthesized = synth();
  evaluation = evaluatorFor(synthesized, { results: RESULTS, input: INPUT });
  s3 = await startS3rver({ buckets: [RESULTS, INPUT] });
  // Over one 8 MiB part: archives take the multipart path, staged and copied.
  sim = await startVendorSimulator({ reportPaddingBytes: 9 * 1024 * 1024 });
  const client = new BreachClient({
    baseUrl: sim.url,
    allowedOrigins: [sim.storageUrl],
    credentials: async () => sim.apiKey,
    retry: { maxAttempts: 1 },
  });
  const s3Client = evaluation.iam.watch(recordingS3(s3.createClient()));
  const logger = createMemoryLogger();
  const deps: BreachDeps = {
    s3: s3Client,
    breachClient: recordingBreachApi(client),
    logger,
    metrics: { record: () => undefined },
    settings: createBreachSettings({ resultsBucket: RESULTS }),
    clock: () => new Date(),
    reportNamingKey: async () => 'least-privilege-report-naming-key-0123456789',
  };
  const watchlistDeps: WatchlistDeps = {
    s3: s3Client,
    logger,
    clock: () => new Date(),
    settings: { resultsBucket: RESULTS, maxEmails: 50 },
    identityKey: async () => {
      recordUse('secretsmanager:GetSecretValue');
      return 'k'.repeat(64);
    },
  };
  try {
    await s3.client.send(
      new PutObjectCommand({
        Bucket: INPUT,
        Key: 'watchlists/vips.csv',
        Body: 'Jane Doe,jane@example.com\nClean,clean@example.org\n',
      }),
    );
    const prepared = await asHandler('prepare-watchlist', () =>
      prepareWatchlist(watchlistDeps, {
        source: { type: 's3', bucket: INPUT, key: 'watchlists/vips.csv', versionId: 'v1' },
      }),
    );
    // A schedule fire names no version: the latest object is read.
    await asHandler('prepare-watchlist', () =>
      prepareWatchlist(watchlistDeps, {
        source: {
          type: 'schedule',
          scheduleName: 'weekly',
          scheduledTime: '2026-11-23T06:00:00Z',
          bucket: INPUT,
          key: 'watchlists/vips.csv',
        },
      }),
    );
    const { getJson } = await import('#lambdas/platform/s3/json-objects');
    const items = await getJson<WatchlistItem[]>(
      { s3: s3.client, settings: { resultsBucket: RESULTS } },
      RESULTS,
      prepared.itemsKey,
    );
    for (const { row: _row, executionName: _name, ...input } of items) {
      const answered = await asHandler('breach-recon', () => recon(deps, input));
      // A re-run: answered from recon.json.
      await asHandler('breach-recon', () => recon(deps, input));
      if (answered.recon.status !== 'success') continue;
      const archived = await asHandler('archive-breach-report', () => archiveRunReport(deps, answered));
      await asHandler('archive-breach-report', () => archiveRunReport(deps, answered));
      await asHandler('write-breach-manifest', () => writeBreachManifest(deps, archived));
    }
    await asHandler('record-breach-failure', () =>
      recordBreachFailure(deps, {
        ...items[0],
        failure: { error: 'ArchiveFailed' },
        caught: { Error: 'X', Cause: 'y' },
      }),
    );
    // A redriven run: the first person's child already ran, and is looked up.
    const lookup: ExecutionLookup = {
      async describe() {
        recordUse('states:DescribeExecution');
        return { status: 'SUCCEEDED', output: '{"manifestKey":"breach/people/x/manifest.json"}' };
      },
    };
    const alreadyRan = {
      executionName: items[0]?.executionName ?? '',
      status: 'failed' as const,
      error: { name: 'StepFunctions.ExecutionAlreadyExistsException', message: 'exists' },
    };
    // The run-finished event: EventBridge PutEvents in AWS.
    const events: RunEventPublisher = {
      async runFinished() {
        recordUse('events:PutEvents');
      },
    };
    await asHandler('write-watchlist-summary', () =>
      writeWatchlistSummary(
        { ...watchlistDeps, executions: lookup, events },
        { ...prepared, results: [alreadyRan] },
      ),
    );
    sim.createReport('never-archived_1');
    await asHandler('reconcile-breach-reports', () => reconcileReports(deps));
  } finally {
    await client.close();
  }
}, 120_000);

afterAll(async () => {
  await sim?.close();
  await s3?.close();
});

describe('least privilege of the breach handlers', () => {
  it('made every S3 call and key read with what the synthesized policies allow (evaluated as IAM would)', () => {
    const { checks, denials } = evaluation.iam.stats();
    expect(denials).toEqual([]);
    expect(checks).toBeGreaterThan(20);
  });

  it.each(BREACH_HANDLERS)('grants %s exactly the actions its runs used', (handler) => {
    const exempt = UNREACHABLE_HERE[handler] ?? {};
    const granted = grantedActions(synthesized, handler);
    const observed = used.get(handler) ?? new Set<string>();

    const unusedGrants = [...granted].filter((a) => !observed.has(a) && !(a in exempt)).sort();
    const ungrantedUses = [...observed].filter((a) => !granted.has(a)).sort();

    expect(observed.size, `${handler} ran no path`).toBeGreaterThan(0);
    expect({ unusedGrants, ungrantedUses }).toEqual({ unusedGrants: [], ungrantedUses: [] });
    for (const action of Object.keys(exempt)) expect(granted, action).toContain(action);
  });

  it.each(BREACH_HANDLERS)('declares for %s what the runs used, in lambdas/registry.ts', (handler) => {
    const declaration = declarationOf(handler);
    const declared = new Set([
      ...declaration.s3.flatMap((use) => use.actions.map((a) => `s3:${a}`)),
      ...(declaration.vendorApis.length > 0 || (declaration.secrets ?? []).length > 0
        ? ['secretsmanager:GetSecretValue']
        : []),
      ...Object.values(declaration.stateMachines ?? {}).flatMap((actions) =>
        (actions ?? []).map((a) => `states:${a}`),
      ),
      ...(declaration.publishesEvents === true ? ['events:PutEvents'] : []),
    ]);
    expect(new Set([...(used.get(handler) ?? []), ...Object.keys(UNREACHABLE_HERE[handler] ?? {})])).toEqual(
      declared,
    );
  });
});
