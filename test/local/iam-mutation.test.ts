/**
 * The IAM evaluator on a real run: one domain through the synthesized ScanDomain with its real
 * handlers, against the simulator and s3rver, every S3 call checked against the synthesized policies.
 * The template as synthesized runs clean; the same template with the manifest writer's s3:PutObject
 * statement removed stops with AccessDenied at exactly that call, as the deployed stack would, and
 * without the poll function's SendTaskSuccess the early-end watcher releases nothing.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EARLY_END_SCHEDULE, type PassReport, watchEarlyEndsOnce } from '#lambdas/scan/early-end-watch';
import { WAITING_PREFIX, waitingRecordKey } from '#lambdas/scan/waiting-records';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import { LocalTaskTokens } from '../../local/runner/early-end-watch.ts';
import { localStateMachine } from '../../local/runner/task-binding.ts';
import { runAs } from '../../local/services/iam/attribution.ts';
import { type EvaluationStats, localRunEvaluator } from '../../local/services/iam/evaluator.ts';
import { iamViewOf } from '../../local/services/iam/view.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import { type CfnTemplate, scanDomainStateMachine } from '../../local/synth/definitions.ts';
import { synthesizeTemplate } from '../../local/synth/synth.ts';
import { cachedSynthesis } from '../../local/synth/synth-cache.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { listKeys } from '../kit/s3.ts';
import { executeScan, executionEnd, type LocalRun, vendorClientsFor } from './harness.ts';

const RESULTS = 'pipeline-results';
const QUICK_POLL = { minWaitSeconds: 1, maxWaitSeconds: 2, growthFactor: 1.5, deadlineSeconds: 60 };

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

/** The template with the s3:PutObject statement on `scans/*` of one handler's role policy removed. */
function withoutPutObject(template: CfnTemplate, handlerFile: string): CfnTemplate {
  const mutated = structuredClone(template) as { Resources: Resources };
  const fn = Object.values(mutated.Resources).find(
    (r) =>
      r.Type === 'AWS::Lambda::Function' && String(r.Properties?.Description).endsWith(`/${handlerFile}.ts`),
  );
  if (!fn) throw new Error(`the template has no function for the ${handlerFile} handler`);
  const role = (fn.Properties as { Role: { 'Fn::GetAtt': [string] } }).Role['Fn::GetAtt'][0];
  let removed = 0;
  for (const resource of Object.values(mutated.Resources)) {
    const roles = (resource.Properties?.Roles as { Ref: string }[] | undefined) ?? [];
    if (resource.Type !== 'AWS::IAM::Policy' || !roles.some((r) => r.Ref === role)) continue;
    const document = resource.Properties?.PolicyDocument as {
      Statement: { Action: string | string[]; Resource?: unknown }[];
    };
    // Not the learned durations' (learned/*): losing that one costs a log line, not the scan.
    const kept = document.Statement.filter(
      (s) =>
        !([] as string[]).concat(s.Action).includes('s3:PutObject') ||
        !JSON.stringify(s.Resource).includes('/scans/*'),
    );
    removed += document.Statement.length - kept.length;
    document.Statement = kept;
  }
  if (removed !== 1)
    throw new Error(`expected one s3:PutObject statement on scans/* for ${handlerFile}, removed ${removed}`);
  return mutated;
}

/** The template without the SendTaskSuccess statement of the poll function's role. */
function withoutTaskSuccess(template: CfnTemplate): CfnTemplate {
  const mutated = structuredClone(template) as { Resources: Resources };
  let removed = 0;
  for (const resource of Object.values(mutated.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const document = resource.Properties?.PolicyDocument as { Statement: { Action: string | string[] }[] };
    const kept = document.Statement.filter(
      (statement) => !([] as string[]).concat(statement.Action).includes('states:SendTaskSuccess'),
    );
    removed += document.Statement.length - kept.length;
    document.Statement = kept;
  }
  if (removed !== 1) throw new Error(`expected one states:SendTaskSuccess statement, removed ${removed}`);
  return mutated;
}

/** One pass of the early-end watcher, as the poll function, over a finished scan's waiting record. */
async function releaseWithEvaluation(
  policies: CfnTemplate,
  domain: string,
): Promise<{ report: PassReport; released: boolean; stats: EvaluationStats; left: string[] }> {
  const iam = localRunEvaluator(iamViewOf(policies), {
    inputBucket: 'pipeline-input',
    resultsBucket: RESULTS,
  });
  const clients = vendorClientsFor(sim);
  const tokens = new LocalTaskTokens();
  const token = LocalTaskTokens.newToken();
  const startedAt = new Date(Date.now() - 120_000).toISOString();
  try {
    const { uuid } = await clients.scan.startScan(domain);
    await s3.client.send(
      new PutObjectCommand({ Bucket: RESULTS, Key: waitingRecordKey(uuid, startedAt, 1, 600), Body: token }),
    );
    const waiting = tokens.waitOn(token, 500);
    const report = await runAs('poll-scan-status', () =>
      watchEarlyEndsOnce(
        {
          s3: iam.watch(s3.createClient()),
          bucket: RESULTS,
          scanClient: clients.scan,
          sfn: iam.watch(tokens.client),
          logger: createMemoryLogger(),
          clock: () => new Date(),
          sleep: async () => {},
          schedule: EARLY_END_SCHEDULE,
          concurrency: 1,
          timeBudgetMs: 60_000,
          passes: 1,
        },
        Date.now() + 60_000,
      ),
    );
    const released = (await waiting) !== undefined;
    const left = await listKeys(s3.client, RESULTS, `${WAITING_PREFIX}${uuid}/`);
    return { report, released, stats: iam.stats(), left };
  } finally {
    await clients.close();
  }
}

let template: CfnTemplate;
let s3: S3rverFixture;
let sim: VendorSimulator;

/** One scan of `domain` with every S3 call checked against `policies`' synthesized policies. */
async function scanWithEvaluation(
  policies: CfnTemplate,
  domain: string,
): Promise<{ run: LocalRun; stats: EvaluationStats }> {
  const iam = localRunEvaluator(iamViewOf(policies), {
    inputBucket: 'pipeline-input',
    resultsBucket: RESULTS,
  });
  const definition = scanDomainStateMachine(template).definition;
  const clients = vendorClientsFor(sim);
  try {
    const run = await executeScan(
      {
        definition,
        machine: localStateMachine(definition),
        s3: iam.watch(s3.createClient()),
        resultsBucket: RESULTS,
        scanClient: clients.scan,
        poll: QUICK_POLL,
        logger: createMemoryLogger(),
        clock: () => new Date(),
      },
      domain,
    );
    return { run, stats: iam.stats() };
  } finally {
    await clients.close();
  }
}

beforeAll(async () => {
  template = synthesizeTemplate(DEFAULT_PIPELINE_CONFIG);
  s3 = await startS3rver({ buckets: [RESULTS] });
  sim = await startVendorSimulator({ pollsToFinish: 1 });
}, 120_000);

afterAll(async () => {
  await sim?.close();
  await s3?.close();
});

describe('IAM evaluation of a local scan against the synthesized policies', () => {
  it('keeps in the synth cache the view the evaluator resolves from the full template', async () => {
    expect((await cachedSynthesis(DEFAULT_PIPELINE_CONFIG)).iam).toEqual(iamViewOf(template));
  }, 120_000);

  it('runs the synthesized stack as is with every handler call allowed', async () => {
    const { run, stats } = await scanWithEvaluation(template, 'allowed.example.com');

    expect(executionEnd(run.events).status).toBe('succeeded');
    expect(run.path).toContain('WriteManifest');
    expect(stats.denials).toEqual([]);
    // StartScan and the polls make no S3 call; the fetches, the manifest listing and write do.
    expect(stats.checks).toBeGreaterThanOrEqual(5);
    expect(await listKeys(s3.client, RESULTS, 'scans/allowed.example.com/')).toEqual(
      expect.arrayContaining([expect.stringMatching(/\/manifest\.json$/)]),
    );
  }, 60_000);

  it("stops at the manifest writer's PutObject, with AccessDenied, when its grant is removed", async () => {
    const { run, stats } = await scanWithEvaluation(
      withoutPutObject(template, 'write-scan-manifest'),
      'denied.example.com',
    );

    // WaitForScan's elapsed waits are caught heartbeat timeouts, no failure of a step.
    const failed = run.events.flatMap((e) =>
      e.type === 'StateFailed' && e.state.name !== 'WaitForScan' ? [[e.state.name, e.Error]] : [],
    );
    // The Task that made the call fails with AWS's error; the Fail state then names the category.
    expect(failed).toEqual([
      ['WriteManifest', 'AccessDenied'],
      ['Failed', 'ManifestFailed'],
    ]);
    expect(run.path.slice(run.path.indexOf('WriteManifest'))).toEqual(
      expect.arrayContaining(['WriteManifest', 'RecordFailure']),
    );
    expect(executionEnd(run.events).status).toBe('failed');
    expect(run.result.outcome?.error?.name ?? run.result.error?.name).toBe('AccessDenied');
    expect(stats.denials).toEqual([
      expect.objectContaining({
        handler: 'write-scan-manifest',
        command: 'PutObjectCommand',
        action: 's3:PutObject',
        resource: expect.stringMatching(
          /^arn:aws:s3:::securitypipeline-storageresults\w+\/scans\/denied\.example\.com\/.*manifest\.json$/,
        ),
        message: expect.stringMatching(
          /^User: arn:aws:sts::\d{12}:assumed-role\/\S+WriteScanManifest\S+ is not authorized to perform: s3:PutObject on resource: "\S+" because no identity-based policy allows the s3:PutObject action$/,
        ),
      }),
    ]);
    // The denied write never reached S3; the other functions' writes (the outputs, the failure record) did.
    const keys = await listKeys(s3.client, RESULTS, 'scans/denied.example.com/');
    expect(keys.filter((key) => key.endsWith('/manifest.json'))).toEqual([]);
    expect(keys.length).toBeGreaterThan(0);
  }, 60_000);

  it("releases a finished scan's wait with the synthesized grants, and nothing once SendTaskSuccess is removed", async () => {
    const granted = await releaseWithEvaluation(template, 'released.example.com');
    expect(granted).toMatchObject({ released: true, left: [] });
    expect(granted.stats.denials).toEqual([]);

    const denied = await releaseWithEvaluation(withoutTaskSuccess(template), 'unreleased.example.com');
    expect(denied.released).toBe(false);
    expect(denied.report).toMatchObject({ checked: 1, released: 0, staleRemoved: 0 });
    expect(denied.stats.denials).toEqual([
      expect.objectContaining({
        handler: 'poll-scan-status',
        action: 'states:SendTaskSuccess',
        resource: '*',
      }),
    ]);
    // The record stays for the next tick; the wait runs out as planned meanwhile.
    expect(denied.left).toHaveLength(1);
  });
});
