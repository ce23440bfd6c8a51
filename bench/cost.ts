/**
 * The cost model: what 1,000 scans cost, computed from one measured scan (state transitions, Lambda
 * invocations and their durations, S3 requests; bench/poll-cost.ts `measureScanWork`), the memory
 * each function is deployed with (the synthesized template), and published on-demand prices.
 *
 * Local handler durations are a floor for Lambda's (no cold starts, loopback S3 and vendor): the
 * model also prints the cost at 10x those durations. Vendor time is not Lambda time: a scan
 * waits in Step Functions, not in a function.
 */

import { handlerForState } from '../lambdas/registry.ts';
import { DEFAULT_PIPELINE_CONFIG } from '../lib/config/index.ts';
import { synthesizeTemplate } from '../local/synth.ts';
import { measureScanWork } from './poll-cost.ts';

/** us-east-1 on-demand prices (USD) as published in 2026-11; check before budgeting. */
export const PRICES = {
  stateTransition: 0.025 / 1000,
  lambdaGbSecondArm: 0.0000133334,
  lambdaRequest: 0.2 / 1_000_000,
  s3PutClass: 0.005 / 1000,
  s3GetClass: 0.0004 / 1000,
  s3GbMonth: 0.023,
  secretsApiCall: 0.05 / 10_000,
} as const;

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
    const match = /lambdas\/([\w-]+)\.ts$/.exec(String(resource.Properties?.Description ?? ''));
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
      const mb = memory.get(file) ?? 128;
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
    const total = per1000.transitions + per1000.lambda + per1000.s3Requests + secretsCost;
    const label = scanSeconds >= 3600 ? `${scanSeconds / 3600} h` : `${scanSeconds / 60} min`;
    process.stdout.write(
      `\n-- one ${label} scan (measured): ${work.transitions} state transitions, ${invocations} Lambda invocations, ` +
        `${puts} S3 PUT-class and ${gets} GET-class requests --\n${rows.join('\n')}\n` +
        `per 1,000 such scans: transitions ${usd(per1000.transitions)}, Lambda ${usd(per1000.lambda)} ` +
        `(${usd(per1000.lambdaAt10x)} at 10x the local durations), S3 requests ${usd(per1000.s3Requests)}, ` +
        `Secrets Manager at most ${usd(secretsCost)} (${per1000.secretsAtMost} reads per scan, less when warm); ` +
        `total ${usd(total)} plus S3 storage at ${usd(PRICES.s3GbMonth)} per GB-month of outputs\n`,
    );
    if (scanSeconds === 1800) {
      const domains = 100_000;
      const concurrency = DEFAULT_PIPELINE_CONFIG.scan.maxConcurrency;
      const hours = (domains / concurrency) * (scanSeconds / 3600);
      process.stdout.write(
        `100,000-domain list of ${label} scans: ${domains.toLocaleString('en')} ScanDomain child executions; at the default ` +
          `maxConcurrency ${concurrency} it takes about ${hours.toLocaleString('en')} h (${(hours / 24).toFixed(0)} days; ` +
          `${(hours / 24 / (1000 / concurrency)).toFixed(1)} days at 1,000); cost about ${usd(total * 100)} ` +
          `plus the list machine's own few transitions per child\n`,
      );
    }
  }
}
