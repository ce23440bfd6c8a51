/**
 * StartScan: validate the domain, start the scan at the vendor, and set up the poll loop.
 */

import { METRIC } from '#lambdas/platform/metrics';
import { scanOutputPrefix } from '#lambdas/platform/naming';
import { normalizeDomain } from '#lambdas/platform/validation';
import type { ScanDomainInput, ScanInProgress } from '#lambdas/scan/contracts';
import { parseRunId } from '#lambdas/scan/parse';
import { initialPollState } from '#lambdas/scan/poll-schedule';
import type { ScanDeps } from './deps.ts';
import { type SettleContext, startAndSettle } from './settle-start.ts';

export async function startScan(
  deps: ScanDeps,
  input: ScanDomainInput,
  context: SettleContext = {},
): Promise<ScanInProgress> {
  // Both throw InvalidInputError naming the field; Step Functions catches it as ScanRejected.
  const domain = normalizeDomain(input.domain, 'domain', { allowSpecialUse: deps.settings.allowSpecialUse });
  const runId = parseRunId(input.runId);

  // A start whose answer was lost is settled from the vendor's listing (settle-start.ts).
  const { uuid, settled, starts } = await startAndSettle(deps, domain, context);
  // The date in the prefix is the day the scan started, in UTC: one scan, one folder, however long it runs.
  const startedAt = deps.clock();
  const outputPrefix = scanOutputPrefix(domain, startedAt, uuid);
  const poll = initialPollState(startedAt, deps.settings.poll);
  deps.metrics.record(METRIC.scansStarted, 1, 'Count', { workflow: 'scan' });
  deps.logger.info('Scan started', {
    domain,
    scanUuid: uuid,
    runId,
    outputPrefix,
    nextWaitSeconds: poll.nextWaitSeconds,
    ...(settled === undefined ? {} : { settledStart: settled, starts }),
  });
  return {
    domain,
    runId,
    scanUuid: uuid,
    outputPrefix,
    poll,
    ...(settled === undefined ? {} : { settledStart: settled }),
  };
}
