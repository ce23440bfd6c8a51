/**
 * Adding a scan output is one row of the table (lambdas/scan/scan-outputs.ts) plus its answer in
 * the simulator. Here the row is added through the table's extension point (`withScanOutputs`,
 * the stack's `scanOutputs`) rather than by editing the file, so the other tests keep the built-in
 * three: the synthesized stack gets a fourth fetch branch, the extended table in its functions'
 * environment and the output in NothingStored, and the synthesized definition, run locally against
 * the simulator and s3rver, stores the added output and lists it in the manifest.
 */
import { createHash } from 'node:crypto';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { StateMachine } from 'aws-local-stepfunctions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import { createScanDeps } from '#lambdas/scan/deps';
import { fetchScanOutput } from '#lambdas/scan/fetch-scan-output';
import { SCAN_OUTPUTS, scanOutputsJson, withScanOutputs } from '#lambdas/scan/scan-outputs';
import { createScanSettings } from '#lambdas/scan/settings';
import type { ScanManifest } from '#lambdas/scan/write-scan-manifest';
import { parsePipelineConfig } from '../../lib/config/index.ts';
import { SecurityPipelineStack } from '../../lib/security-pipeline-stack.ts';
import { localStateMachine } from '../../local/runner/task-binding.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { OutputAnswers } from '../../local/simulator/scan-outputs.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import type { AslDefinition } from '../../local/synth/definitions.ts';
import { sha256Hex } from '../kit/digest.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { listKeys, readJson, readObject } from '../kit/s3.ts';
import { type AslState, parseDefinition, synth, testApp } from '../kit/synth.ts';
import { enteredStates, executeScan, executionEnd, vendorClientsFor } from '../local/harness.ts';

/** The one row a developer would add to SCAN_OUTPUT_ROWS. */
const SCREENSHOTS_ROW = {
  screenshots: { vendorPath: '/screenshots/{uuid}', nothingStoredMetricId: 'p' },
} as const;
/** Its answer in the simulator: a small PNG-like body, the same for every download of a scan. */
const SCREENSHOTS_ANSWER: OutputAnswers = {
  '/screenshots/{uuid}': {
    name: 'screenshots',
    contentType: 'image/png',
    bytes: () => 4096,
    availableWhenFailed: false,
    gzipWhenAccepted: false,
    content: (source, targetBytes) => [
      Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        Buffer.alloc(targetBytes, createHash('sha256').update(`${source.uuid}/screenshots`).digest()),
      ]),
    ],
  },
};
const OUTPUTS = withScanOutputs(SCREENSHOTS_ROW);
const RESULTS = 'scan-results';
const SCHEDULED = { schedules: [{ name: 'hourly', expression: 'rate(1 hour)', domains: ['example.com'] }] };

let template: Template;
let definition: AslDefinition;
let machine: StateMachine;
let s3: S3rverFixture;
let sim: VendorSimulator;

beforeAll(async () => {
  // A stack of its own: the kit's shared syntheses are the built-in table's.
  const stack = new SecurityPipelineStack(testApp(), 'SecurityPipeline', {
    config: parsePipelineConfig(SCHEDULED, 'test'),
    scanOutputs: OUTPUTS,
  });
  template = Template.fromStack(stack);
  const [scanMachine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'))
    .map((resource) => parseDefinition(resource.Properties?.DefinitionString))
    .filter((candidate) => 'StartScan' in candidate.States);
  if (!scanMachine) throw new Error('no ScanDomain state machine');
  definition = scanMachine;
  machine = localStateMachine(definition);
  s3 = await startS3rver({ buckets: [RESULTS] });
  sim = await startVendorSimulator({ pollsToFinish: 1, outputAnswers: SCREENSHOTS_ANSWER });
});

afterAll(async () => {
  await sim?.close();
  await s3?.close();
});

describe('a scan output added to the table', () => {
  it('adds its row after the built-in ones, with the derived state and operation names', () => {
    expect(OUTPUTS.map((o) => [o.name, o.stateName, o.operation])).toEqual([
      ['report', 'FetchReport', 'scan.getReport'],
      ['logs', 'FetchLogs', 'scan.getLogs'],
      ['debug', 'FetchDebug', 'scan.getDebug'],
      ['screenshots', 'FetchScreenshots', 'scan.getScreenshots'],
    ]);
  });

  it('gets a fourth Parallel branch that passes its name to the fetch function', () => {
    const parallel = definition.States.FetchOutputs as AslState;
    const branches = parallel.Branches as AslDefinition[];
    expect(branches.map((branch) => branch.StartAt)).toEqual([
      'FetchReport',
      'FetchLogs',
      'FetchDebug',
      'FetchScreenshots',
    ]);
    expect(branches[3]?.States.FetchScreenshots?.Parameters).toMatchObject({ output: 'screenshots' });
  });

  it('hands the whole table to the fetch, manifest and reconciliation functions, and none by default', () => {
    const json = scanOutputsJson(OUTPUTS);
    expect(JSON.parse(json)).toMatchObject({ screenshots: { vendorPath: '/screenshots/{uuid}' } });
    for (const handlerFile of ['fetch-scan-output', 'write-scan-manifest', 'reconcile-scans']) {
      template.hasResourceProperties(
        'AWS::Lambda::Function',
        Match.objectLike({
          Description: Match.stringLikeRegexp(`/${handlerFile}\\.ts$`),
          Environment: { Variables: Match.objectLike({ SCAN_OUTPUTS: json }) },
        }),
      );
    }
    const carrying = (t: Template) =>
      t.findResources('AWS::Lambda::Function', {
        Properties: { Environment: { Variables: Match.objectLike({ SCAN_OUTPUTS: Match.anyValue() }) } },
      });
    expect(Object.keys(carrying(template)).length).toBeGreaterThanOrEqual(3);
    expect(carrying(synth(SCHEDULED).template)).toEqual({});
  });

  it("counts its stored bytes in NothingStored's expression", () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmDescription: Match.stringLikeRegexp('#nothingstored$'),
      Metrics: Match.arrayWith([
        Match.objectLike({
          Expression: 'IF(FILL(r, 0) + FILL(l, 0) + FILL(d, 0) + FILL(p, 0) > 0, 0, FILL(s, 0))',
        }),
        Match.objectLike({
          Id: 'p',
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({
              Dimensions: Match.arrayWith([{ Name: 'output', Value: 'screenshots' }]),
            }),
          }),
        }),
      ]),
    });
  });

  it('fails at synth when more outputs count towards NothingStored than one alarm can hold', () => {
    // Prepare: 3 built-in + 7 added, plus the succeeded scans: 11 metrics where PutMetricAlarm takes 10
    const many = withScanOutputs(
      Object.fromEntries(
        ['a', 'b', 'c', 'e', 'f', 'g', 'h'].map((id) => [
          `extra${id}`,
          { vendorPath: `/extra-${id}/{uuid}` as const, nothingStoredMetricId: id },
        ]),
      ),
    );

    // Act / Assess
    expect(
      () =>
        new SecurityPipelineStack(testApp(), 'SecurityPipeline', {
          config: parsePipelineConfig(SCHEDULED, 'test'),
          scanOutputs: many,
        }),
    ).toThrow(/scanOutputs: 10 outputs count towards NothingStored, but one alarm takes at most 9/);
  });

  it('is fetched into S3 by the synthesized definition and listed in the manifest', async () => {
    // Prepare
    const clients = vendorClientsFor(sim);
    const logger = createMemoryLogger();
    const now = new Date('2026-11-20T10:00:00.000Z');

    // Act
    const run = await executeScan(
      {
        definition,
        machine,
        s3: s3.client,
        resultsBucket: RESULTS,
        scanClient: clients.scan,
        poll: { minWaitSeconds: 1, maxWaitSeconds: 2, growthFactor: 1.5, deadlineSeconds: 60 },
        logger,
        clock: () => now,
        outputs: OUTPUTS,
      },
      'shots.example.com',
    ).finally(() => clients.close());

    // Assess: the scan succeeded with four outputs, the added one as the vendor served it
    const end = executionEnd(run.events);
    expect(end.status).toBe('succeeded');
    const outcome = end.output as ScanOutcome;
    const manifest = await readJson<ScanManifest>(s3.client, RESULTS, outcome.manifestKey ?? '');
    expect(manifest.objects.map((o) => o.name)).toEqual(['report', 'logs', 'debug', 'screenshots']);
    const screenshots = manifest.objects[3];
    expect(screenshots).toMatchObject({
      key: `${outcome.outputPrefix}screenshots.bin`,
      contentType: 'image/png',
      size: 8 + 4096,
    });
    const served = Buffer.from(
      await (
        await fetch(`${sim.url}/screenshots/${outcome.scanUuid}`, {
          headers: { authorization: `Bearer ${sim.apiKey}` },
        })
      ).arrayBuffer(),
    );
    const stored = await readObject(s3.client, RESULTS, screenshots?.key ?? '');
    expect(stored.equals(served)).toBe(true);
    expect(sha256Hex(stored)).toBe(screenshots?.sha256);
    expect(await listKeys(s3.client, RESULTS, outcome.outputPrefix ?? '')).toEqual(
      [...manifest.objects.map((o) => o.key), outcome.manifestKey].sort(),
    );
    expect(enteredStates(run.events)).toContain('FetchScreenshots');
    expect(sim.requestCount('GET /screenshots/{uuid}')).toBe(2);
  });

  it('is refused by a function that was given the built-in table only', async () => {
    // Prepare: the handlers' default table, as a function without SCAN_OUTPUTS has it
    const clients = vendorClientsFor(sim);
    const deps = createScanDeps({
      s3: s3.client,
      scanClient: clients.scan,
      settings: createScanSettings({ resultsBucket: RESULTS }),
      logger: createMemoryLogger(),
    });
    expect(deps.settings.outputs).toBe(SCAN_OUTPUTS);
    const state = {
      domain: 'shots.example.com',
      runId: 'adhoc',
      scanUuid: '00000000-0000-4000-8000-000000000001',
      outputPrefix: 'scans/shots.example.com/2026/11/20/00000000-0000-4000-8000-000000000001/',
      poll: {
        attempt: 1,
        nextWaitSeconds: 1,
        waitedSeconds: 1,
        startedAt: '2026-11-20T10:00:00.000Z',
        deadlineExceeded: false,
      },
      output: 'screenshots',
    };

    // Act
    const error = await fetchScanOutput(deps, state)
      .catch((e: unknown) => e)
      .finally(() => clients.close());

    // Assess
    expect(error).toMatchObject({ name: 'InvalidInputError', message: expect.stringContaining('output') });
    expect((error as Error).message).toContain('report, logs, debug');
  });
});
