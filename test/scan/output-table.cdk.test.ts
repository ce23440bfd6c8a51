/**
 * Adding a scan output is one row of the table (lambdas/scan/scan-outputs.ts) plus its answer in
 * the simulator: nothing else names the outputs. Every assertion here reads the rows from the
 * table, never a list of its own, so a row added there is checked here as it is: the synthesized
 * ScanDomain gets one fetch branch per row, the registry binds the fetch function to each branch's
 * state, NothingStored counts each row's bytes, the handlers refuse a name the table lacks, and the
 * synthesized definition, run locally against the simulator and s3rver, stores every row's output
 * and lists them in the table's order.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { StateMachine } from 'aws-local-stepfunctions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declarationOf } from '#lambdas/registry';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import { parseOutputName } from '#lambdas/scan/parse';
import { SCAN_OUTPUT_NAMES, SCAN_OUTPUTS } from '#lambdas/scan/scan-outputs';
import type { ScanManifest } from '#lambdas/scan/write-scan-manifest';
import { localStateMachine } from '../../local/runner/task-binding.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import type { AslDefinition } from '../../local/synth/definitions.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { listKeys, readJson } from '../kit/s3.ts';
import { type AslState, stateMachineWith, synth } from '../kit/synth.ts';
import { executeScan, executionEnd, vendorClientsFor } from '../local/harness.ts';

const RESULTS = 'scan-results';
/** NothingStored judges quiet days of scheduled scans: a stack with a schedule has it. */
const SCHEDULED = { schedules: [{ name: 'hourly', expression: 'rate(1 hour)', domains: ['example.com'] }] };

let definition: AslDefinition;
let machine: StateMachine;
let s3: S3rverFixture;
let sim: VendorSimulator;

beforeAll(async () => {
  definition = stateMachineWith(synth(), 'StartScan').definition as AslDefinition;
  machine = localStateMachine(definition);
  s3 = await startS3rver({ buckets: [RESULTS] });
  sim = await startVendorSimulator({ pollsToFinish: 1 });
});

afterAll(async () => {
  await sim?.close();
  await s3?.close();
});

describe('the scan outputs table drives', () => {
  it('the state machine: one Parallel branch per row, in its order, passing its name to the fetch', () => {
    const parallel = definition.States.FetchOutputs as AslState;
    const branches = parallel.Branches as AslDefinition[];
    expect(branches.map((branch) => branch.StartAt)).toEqual(SCAN_OUTPUTS.map((o) => o.stateName));
    SCAN_OUTPUTS.forEach(({ name, stateName }, i) => {
      expect(branches[i]?.States[stateName]?.Parameters).toMatchObject({ output: name });
    });
  });

  it("the registry: the fetch function serves each row's state, and no other", () => {
    expect(declarationOf('fetch-scan-output').states).toEqual(SCAN_OUTPUTS.map((o) => o.stateName));
  });

  it("NothingStored: each counted row's stored bytes, by its metric id", () => {
    const counted = SCAN_OUTPUTS.filter((o) => o.nothingStoredMetricId !== false);
    const sum = counted.map((o) => `FILL(${o.nothingStoredMetricId}, 0)`).join(' + ');
    Template.fromJSON(synth(SCHEDULED).json).hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmDescription: Match.stringLikeRegexp('#nothingstored$'),
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: `IF(${sum} > 0, 0, FILL(s, 0))` }),
        ...counted.map(({ name, nothingStoredMetricId }) =>
          Match.objectLike({
            Id: nothingStoredMetricId,
            MetricStat: Match.objectLike({
              Metric: Match.objectLike({ Dimensions: Match.arrayWith([{ Name: 'output', Value: name }]) }),
            }),
          }),
        ),
      ]),
    });
  });

  it('the handlers: a name the table lacks is refused, naming the rows it has', () => {
    expect(() => parseOutputName('screenshots')).toThrow(`must be one of ${SCAN_OUTPUT_NAMES.join(', ')}`);
    for (const { name } of SCAN_OUTPUTS) expect(parseOutputName(name).name).toBe(name);
  });

  it('the local run: every row is fetched into S3 by the synthesized definition and listed in order', async () => {
    // Prepare
    const clients = vendorClientsFor(sim);
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
        logger: createMemoryLogger(),
        clock: () => now,
      },
      'table.example.com',
    ).finally(() => clients.close());

    // Assess
    const end = executionEnd(run.events);
    expect(end.status).toBe('succeeded');
    const outcome = end.output as ScanOutcome;
    const manifest = await readJson<ScanManifest>(s3.client, RESULTS, outcome.manifestKey ?? '');
    expect(manifest.objects.map((o) => o.name)).toEqual(SCAN_OUTPUT_NAMES);
    expect(await listKeys(s3.client, RESULTS, outcome.outputPrefix ?? '')).toEqual(
      [...manifest.objects.map((o) => o.key), outcome.manifestKey].sort(),
    );
    for (const { vendorPath } of SCAN_OUTPUTS) {
      expect(sim.requestCount(`GET ${vendorPath}`), vendorPath).toBeGreaterThanOrEqual(1);
    }
  });
});
