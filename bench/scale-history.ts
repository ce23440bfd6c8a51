/**
 * The scale table's history column, measured: one execution of each state machine a measured step
 * runs in, through the synthesized definition in the local engine (aws-local-stepfunctions) with
 * the real handlers, the vendor simulator and the embedded S3, its events counted as Step Functions
 * records them (local/runner/pipeline.ts and local/runner/breach-run.ts count them).
 */

import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { DEFAULT_PIPELINE_CONFIG } from '../lib/config/defaults.ts';
import { localPollSettings } from '../local/cli/poll-flags.ts';
import { runBreachReport } from '../local/runner/breach-run.ts';
import { runDomainList } from '../local/runner/domain-list-run.ts';
import { type JSONValue, localStateMachine, type TaskHandler } from '../local/runner/task-binding.ts';
import { startS3rver } from '../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../local/simulator/index.ts';
import {
  type AslDefinition,
  breachReportStateMachine,
  domainListStateMachine,
  scanDomainStateMachine,
  stateMachineWithState,
} from '../local/synth/definitions.ts';
import { cachedTemplate } from '../local/synth/synth-cache.ts';

export interface MeasuredHistories {
  /** One ScanDomain execution whose scan finishes at its first poll (FetchReport runs in it). */
  readonly scanDomain: number;
  /** One BreachReport execution that archives its report (ArchiveReport runs in it). */
  readonly breachReport: number;
}

const INPUT = 'history-input';
const RESULTS = 'history-results';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

export async function measureHistories(): Promise<MeasuredHistories> {
  const config = DEFAULT_PIPELINE_CONFIG;
  const template = await cachedTemplate(config);
  const vendor = await startVendorSimulator({ pollsToFinish: 0, reportBytes: 8 * 1024 });
  const s3 = await startS3rver({ buckets: [INPUT, RESULTS] });
  try {
    const domain = 'history.bench-scale.net';
    const list = await runDomainList(
      {
        s3: s3.client,
        inputBucket: INPUT,
        resultsBucket: RESULTS,
        scanDefinition: scanDomainStateMachine(template).definition,
        scanClient: new ScanClient({ baseUrl: vendor.url, credentials: async () => vendor.apiKey }),
        poll: localPollSettings(config, { demo: true }).poll,
        concurrency: 1,
        intakePrefix: config.intake.prefix,
        intakeSuffixes: config.intake.suffixes,
        logger: quiet,
        waitOverrideMs: 0,
      },
      { domains: [domain] },
    );
    const scanDomain = list.historyEvents.get(domain);
    if (scanDomain === undefined || list.summary.domains[0]?.state !== 'succeeded')
      throw new Error(`the ScanDomain execution for the history column did not succeed`);
    const breach = await runBreachReport(
      {
        s3: s3.client,
        resultsBucket: RESULTS,
        definition: breachReportStateMachine(template).definition,
        breachClient: new BreachClient({
          baseUrl: vendor.url,
          allowedOrigins: [vendor.storageUrl],
          credentials: async () => vendor.apiKey,
        }),
        maxEmails: config.breach.maxEmails,
        identityKey: 'bench-identity-key-0123456789abcdef-0123456789',
        logger: quiet,
      },
      { name: 'Sim Person', emails: ['sim.person@example.com'], requestId: 'history' },
    );
    if (breach.outcome !== 'archived')
      throw new Error(`the BreachReport execution for the history column ended ${breach.outcome}`);
    return { scanDomain, breachReport: breach.historyEvents };
  } finally {
    await vendor.close();
    await s3.close();
  }
}

/** The steps of a list or watchlist run, bound to their real handlers by the worker. */
export interface ListRunSteps {
  prepare(event: unknown): Promise<unknown>;
  /** Stands in for the Distributed Map: writes its results as ResultWriter does, returns its output. */
  map(prepared: unknown): Promise<unknown>;
  summarize(event: unknown): Promise<unknown>;
}

/**
 * A list or watchlist run through its synthesized definition. The local engine runs no Distributed
 * Map, so the Map state runs as a Task (same Next, Catch and ResultPath) whose handler writes the
 * results the children would have; each item is a child execution with a history of its own, so
 * the run's count is the parent's alone, the Map counted as a Task's five events (entered,
 * scheduled, started, succeeded, exited) where AWS records its map-run events.
 */
export async function listRunHistoryEvents(
  workflow: 'list' | 'watchlist',
  input: unknown,
  steps: ListRunSteps,
): Promise<number> {
  const template = await cachedTemplate(DEFAULT_PIPELINE_CONFIG);
  const definition = structuredClone(
    (workflow === 'list'
      ? domainListStateMachine(template)
      : stateMachineWithState(template, 'PrepareWatchlist')
    ).definition,
  ) as AslDefinition & { States: Record<string, Record<string, unknown>> };
  const prepareState = definition.StartAt;
  const mapState = String(definition.States[prepareState]?.Next);
  const map: Record<string, unknown> = definition.States[mapState] ?? {};
  if (map.Type !== 'Map') throw new Error(`${workflow}: ${mapState} is not the Map state`);
  const summaryState = String(map.Next);
  definition.States[mapState] = {
    Type: 'Task',
    Resource: 'arn:aws:lambda:us-east-1:000000000000:function:distributed-map-stand-in',
    ...Object.fromEntries(
      ['ResultPath', 'Next', 'Catch'].flatMap((field) => (field in map ? [[field, map[field]]] : [])),
    ),
  };
  const handlers: Record<string, TaskHandler> = {
    [prepareState]: async (event) => (await steps.prepare(event)) as JSONValue,
    [mapState]: async (event) => (await steps.map(event)) as JSONValue,
    [summaryState]: async (event) => (await steps.summarize(event)) as JSONValue,
  };
  const execution = localStateMachine(definition).run(input as JSONValue, {
    overrides: { taskResourceLocalHandlers: handlers },
  });
  let events = 0;
  const counting = (async () => {
    for await (const event of execution.eventLogs) {
      events += 1;
      if ((event.type === 'StateEntered' && event.state.type === 'Task') || event.type === 'StateRetried')
        events += 3;
    }
  })();
  await execution.result;
  await counting;
  return events;
}
