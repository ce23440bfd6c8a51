/**
 * The cost model: what 1,000 scans cost, computed from one measured scan (state transitions, Lambda
 * invocations and their durations, S3 requests; bench/poll-cost.ts `measureScanWork`), the memory
 * each function is deployed with (the synthesized template), and published on-demand prices.
 *
 * Local handler durations are a floor for Lambda's (no cold starts, loopback S3 and vendor): the
 * model also prints the cost at 10x those durations. Vendor time is not Lambda time: a scan
 * waits in Step Functions, not in a function.
 */

import { STEP_FUNCTIONS_HISTORY_EVENT_LIMIT } from '#lambdas/scan/poll-schedule';
import { handlerForState } from '../lambdas/registry.ts';
import { DEFAULT_PIPELINE_CONFIG } from '../lib/config/defaults.ts';
import { DEFAULT_SCAN_CONCURRENCY } from '../lib/config/scan-concurrency.ts';
import { synthesizeTemplate } from '../local/synth/synth.ts';
import { measureScanWork, type ScanWork } from './poll-cost.ts';

/**
 * us-east-1 on-demand prices (USD) as published in 2026-11, each with the page it comes from;
 * check before budgeting.
 */
export const PRICES = {
  /** https://aws.amazon.com/step-functions/pricing/ (Standard workflows) */
  stateTransition: 0.025 / 1000,
  /** https://aws.amazon.com/lambda/pricing/ (Arm, first tier) */
  lambdaGbSecondArm: 0.0000133334,
  /** https://aws.amazon.com/lambda/pricing/ */
  lambdaRequest: 0.2 / 1_000_000,
  /** https://aws.amazon.com/s3/pricing/ (S3 Standard PUT, COPY, POST, LIST) */
  s3PutClass: 0.005 / 1000,
  /** https://aws.amazon.com/s3/pricing/ (S3 Standard GET, SELECT and all other requests) */
  s3GetClass: 0.0004 / 1000,
  /** https://aws.amazon.com/s3/pricing/ (S3 Standard, first 50 TB) */
  s3GbMonth: 0.023,
  /** https://aws.amazon.com/secrets-manager/pricing/ (API calls) */
  secretsApiCall: 0.05 / 10_000,
  /**
   * https://aws.amazon.com/kms/pricing/ (symmetric requests): GetSecretValue on a secret under the
   * AWS managed key aws/secretsmanager makes Secrets Manager call Decrypt, a billed request.
   */
  kmsRequest: 0.03 / 10_000,
  /** https://aws.amazon.com/cloudwatch/pricing/ (Logs, Standard ingestion) */
  logsIngestedGb: 0.5,
  /** https://aws.amazon.com/cloudwatch/pricing/ (Logs, data protection: per GB scanned) */
  logsDataProtectionGb: 0.12,
  /** https://aws.amazon.com/xray/pricing/ (traces recorded) */
  xrayTraceRecorded: 5 / 1_000_000,
} as const;

/**
 * One execution history event as the state machines' log group receives it at level ALL without
 * execution data, in the format AWS documents
 * (https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html#cloudwatch-log-level-summary),
 * with a deployed stack's name lengths: its size is what each history event costs to ingest.
 */
const STATE_MACHINE_LOG_LINE = `${JSON.stringify({
  id: '42',
  type: 'TaskStateEntered',
  details: { inputDetails: { truncated: false }, name: 'PollScanStatus' },
  previous_event_id: '41',
  event_timestamp: '1764237600000',
  execution_arn:
    'arn:aws:states:us-east-1:123456789012:execution:ScanDomainStateMachineA1B2C3D4-AbCdEfGhIjKl:scan-8f2c1e0a9b7d6c5e-example-com-20261127T100000Z',
  redrive_count: '0',
})}\n`;

/**
 * What Lambda itself writes per invocation besides the handler's lines: START, END and REPORT
 * (with X-Ray's trace line), in the format AWS documents
 * (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs.html).
 */
const LAMBDA_PLATFORM_LINES = [
  'START RequestId: 3f2504e0-4f89-11d3-9a0c-0305e82c3301 Version: $LATEST',
  'END RequestId: 3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  'REPORT RequestId: 3f2504e0-4f89-11d3-9a0c-0305e82c3301\tDuration: 12.34 ms\tBilled Duration: 13 ms\tMemory Size: 256 MB\tMax Memory Used: 98 MB\t\nXRAY TraceId: 1-6746f000-0123456789abcdef01234567\tSegmentId: 0123456789abcdef\tSampled: true\t',
]
  .map((line) => `${line}\n`)
  .join('');

const GB = 1024 ** 3;

const S3_PUT_CLASS = new Set([
  'PutObjectCommand',
  'CopyObjectCommand',
  'CreateMultipartUploadCommand',
  'UploadPartCommand',
  'CompleteMultipartUploadCommand',
  'ListObjectsV2Command',
  'PutObjectTaggingCommand',
]);

function memoryByHandler(template: {
  Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}): Map<string, number> {
  const memory = new Map<string, number>();
  for (const resource of Object.values(template.Resources ?? {})) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    // The description ends with the handler's module, `lambdas/<workflow>/<handler>.ts`.
    const match = /lambdas\/(?:[\w-]+\/)*([\w-]+)\.ts$/.exec(String(resource.Properties?.Description ?? ''));
    if (match?.[1]) memory.set(match[1], Number(resource.Properties?.MemorySize ?? 128));
  }
  return memory;
}

export async function costModel(): Promise<void> {
  // The whole template (the synth cache keeps state machines only); bundling is skipped.
  const memory = memoryByHandler(
    synthesizeTemplate(DEFAULT_PIPELINE_CONFIG) as Parameters<typeof memoryByHandler>[0],
  );
  const usd = (n: number) => `$${n.toFixed(n < 1 ? 4 : 2)}`;
  for (const scanSeconds of [1800, 6 * 3600]) {
    const work = await measureScanWork(scanSeconds);
    let gbSeconds = 0;
    let invocations = 0;
    const rows: string[] = [];
    for (const [state, task] of Object.entries(work.tasks)) {
      const file = handlerForState(state) ?? state;
      const mb = memory.get(file);
      if (mb === undefined) throw new Error(`no function in the template runs ${file} (state ${state})`);
      // Lambda bills each invocation by the millisecond, at least 1 ms.
      const billedMs = Math.max(task.totalMs, task.invocations);
      gbSeconds += (mb / 1024) * (billedMs / 1000);
      invocations += task.invocations;
      rows.push(
        `  ${state.padEnd(16)} ${String(task.invocations).padStart(4)} x, ${(task.totalMs / task.invocations).toFixed(1).padStart(6)} ms avg, ${mb} MB`,
      );
    }
    const puts = Object.entries(work.s3Requests)
      .filter(([c]) => S3_PUT_CLASS.has(c))
      .reduce((n, [, v]) => n + v, 0);
    const gets = Object.values(work.s3Requests).reduce((n, v) => n + v, 0) - puts;
    const per1000 = {
      transitions: work.transitions * 1000 * PRICES.stateTransition,
      lambda: gbSeconds * 1000 * PRICES.lambdaGbSecondArm + invocations * 1000 * PRICES.lambdaRequest,
      lambdaAt10x:
        gbSeconds * 10 * 1000 * PRICES.lambdaGbSecondArm + invocations * 1000 * PRICES.lambdaRequest,
      s3Requests: puts * 1000 * PRICES.s3PutClass + gets * 1000 * PRICES.s3GetClass,
      // The vendor steps read the key at most once a minute per warm function: at most one call per
      // vendor invocation, far fewer when warm. The bound is printed.
      secretsAtMost:
        (work.tasks.StartScan?.invocations ?? 0) + (work.tasks.PollScanStatus?.invocations ?? 0) + 3,
    };
    const secretsCost = per1000.secretsAtMost * 1000 * PRICES.secretsApiCall;
    // Each secret read is one Decrypt under aws/secretsmanager.
    const kmsCost = per1000.secretsAtMost * 1000 * PRICES.kmsRequest;
    const logBytes =
      work.historyEvents * Buffer.byteLength(STATE_MACHINE_LOG_LINE) +
      invocations * Buffer.byteLength(LAMBDA_PLATFORM_LINES) +
      work.handlerLogBytes;
    // Data protection scans what the masked groups ingest; priced on all of it, an upper bound.
    const logsCost = ((logBytes * 1000) / GB) * (PRICES.logsIngestedGb + PRICES.logsDataProtectionGb);
    // Upper bound: every invocation its own sampled trace (X-Ray samples, and an execution's
    // Lambda segments join its trace).
    const xrayCost = invocations * 1000 * PRICES.xrayTraceRecorded;
    const total =
      per1000.transitions + per1000.lambda + per1000.s3Requests + secretsCost + kmsCost + logsCost + xrayCost;
    const label = scanSeconds >= 3600 ? `${scanSeconds / 3600} h` : `${scanSeconds / 60} min`;
    process.stdout.write(
      `\n-- one ${label} scan (measured): ${work.transitions} state transitions, ${work.historyEvents} history events, ` +
        `${invocations} Lambda invocations, ${puts} S3 PUT-class and ${gets} GET-class requests, ` +
        `${(logBytes / 1024).toFixed(1)} KiB of logs --\n${rows.join('\n')}\n` +
        `per 1,000 such scans: transitions ${usd(per1000.transitions)}, Lambda ${usd(per1000.lambda)} ` +
        `(${usd(per1000.lambdaAt10x)} at 10x the local durations), S3 requests ${usd(per1000.s3Requests)}, ` +
        `Secrets Manager at most ${usd(secretsCost)} (${per1000.secretsAtMost} reads per scan, less when warm), ` +
        `KMS at most ${usd(kmsCost)} (a Decrypt per read), CloudWatch Logs ${usd(logsCost)} ` +
        `(${work.historyEvents} state machine lines of ${Buffer.byteLength(STATE_MACHINE_LOG_LINE)} B, ` +
        `${invocations} x ${Buffer.byteLength(LAMBDA_PLATFORM_LINES)} B of Lambda platform lines, ` +
        `${(work.handlerLogBytes / 1024).toFixed(1)} KiB of handler lines; ingestion plus data protection), ` +
        `X-Ray at most ${usd(xrayCost)}; total ${usd(total)} plus S3 storage at ${usd(PRICES.s3GbMonth)} per GB-month of outputs\n` +
        `prices: ${Object.keys(PRICES).join(', ')} from the pages cited in bench/cost.ts (us-east-1, 2026-11)\n`,
    );
    if (scanSeconds === 1800) printDailyList(work, scanSeconds, { total, usd });
  }
}

/** Concurrencies the daily-list table shows; the smallest that fits the day is the default's source. */
const LIST_CONCURRENCIES = [10, 1_000, 2_500, 5_000, 10_000] as const;
/** A daily list must leave this share of the day spare (retries, throttling, a slow vendor). */
const DAY_MARGIN = 0.1;

/**
 * A 100,000-domain daily list, from one measured scan: a Distributed Map keeps `concurrency`
 * children in flight, so the list takes about (domains / concurrency) x one child's time. Printed
 * by the cost and the scale benches; `totalPer1000` (the cost bench's) adds the day's cost.
 */
export function printDailyList(
  work: ScanWork,
  scanSeconds: number,
  totalPer1000?: { readonly total: number; readonly usd: (n: number) => string },
) {
  const domains = 100_000;
  const handlerSeconds = Object.values(work.tasks).reduce((sum, task) => sum + task.totalMs, 0) / 1000;
  // Lambda time at 10x the local durations (vendor latency, cold starts), as the Lambda column.
  const childSeconds = work.noticedAtSeconds + 10 * handlerSeconds;
  const hoursAt = (concurrency: number) => ((domains / concurrency) * childSeconds) / 3600;
  const smallest = LIST_CONCURRENCIES.find((c) => hoursAt(c) <= 24 * (1 - DAY_MARGIN)) ?? 10_000;
  const chosen = DEFAULT_SCAN_CONCURRENCY;
  const rows = LIST_CONCURRENCIES.map(
    (c) =>
      `${c.toLocaleString('en')}: ${hoursAt(c) < 48 ? `${hoursAt(c).toFixed(1)} h` : `${(hoursAt(c) / 24).toFixed(0)} days`}`,
  );
  process.stdout.write(
    `100,000-domain daily list of ${scanSeconds / 60}-minute scans (${domains.toLocaleString('en')} ScanDomain child executions): ` +
      `one child takes ${childSeconds.toFixed(0)} s (noticed at ${work.noticedAtSeconds} s, measured, plus 10x the local handler time ` +
      `${handlerSeconds.toFixed(2)} s); by maxConcurrency ${rows.join(', ')}. ` +
      `The smallest of these within the day with ${DAY_MARGIN * 100} % spare: ${smallest.toLocaleString('en')}; ` +
      `at the default scan.maxConcurrency ${chosen.toLocaleString('en')}: ${hoursAt(chosen).toFixed(1)} h, within 24 h: ` +
      `${hoursAt(chosen) <= 24 ? 'HOLDS' : 'FAILS'}. Per child: ${work.transitions} transitions, ${work.historyEvents} history events ` +
      `(limit ${STEP_FUNCTIONS_HISTORY_EVENT_LIMIT.toLocaleString('en')}); the list run's own history is O(1) (Distributed Map) and its ` +
      `payloads are the scale bench's PrepareDomainList row.` +
      (totalPer1000
        ? ` Cost about ${totalPer1000.usd(totalPer1000.total * 100)} a day plus the list machine's few transitions per child.`
        : '') +
      `\nassumptions: the vendor runs ${chosen.toLocaleString('en')} scans at once without 429s; every scan takes ` +
      `${scanSeconds / 60} min and is learned (day 2 on); a Distributed Map runs up to 10,000 children at once; Lambda's concurrency ` +
      `is not the limit (a child runs a function for ${handlerSeconds.toFixed(2)} s locally in ${childSeconds.toFixed(0)} s; ` +
      `${chosen.toLocaleString('en')} children need about ${Math.ceil((chosen * 10 * handlerSeconds) / childSeconds)} concurrent Lambda executions of the account's 1,000 default).\n`,
  );
}
