/**
 * One domain through the synthesized ScanDomain definition and the real scan handlers, with the
 * given vendor client: the dependent scan `npm start -- rotate` runs with the rotated key, and the
 * orphan `npm start -- reconcile` makes. The same list runner as `npm start -- scan`, so nothing
 * here is a special path.
 */
import { join } from 'node:path';
import type { ScanApi } from '#lambdas/scan/deps';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import { localPollSettings } from '../cli/poll-flags.ts';
import { scanDomainStateMachine } from '../synth/definitions.ts';
import { cachedTemplate } from '../synth/synth-cache.ts';
import { runDomainList } from './domain-list-run.ts';
import { LOCAL_INPUT_BUCKET, LOCAL_RESULTS_BUCKET, type LocalRun } from './local-run.ts';

export interface OneDomainScan {
  readonly domain: string;
  /** The domain's final state in the list summary (`succeeded`, `rejected`...). */
  readonly state: string;
  /** Where its outputs or its failure record are, under the run's results. */
  readonly where: string;
  /** Why the domain was never scanned (an invalid line, a refused list), when it was not. */
  readonly reason?: string;
}

export async function scanOneDomain(
  run: LocalRun,
  config: PipelineConfig,
  scanClient: ScanApi,
  domain: string,
): Promise<OneDomainScan> {
  const { poll } = localPollSettings(config, { demo: true });
  const result = await runDomainList(
    {
      s3: run.s3.client,
      inputBucket: LOCAL_INPUT_BUCKET,
      resultsBucket: LOCAL_RESULTS_BUCKET,
      scanDefinition: scanDomainStateMachine(await cachedTemplate(config)).definition,
      scanClient,
      poll,
      concurrency: 1,
      intakePrefix: config.intake.prefix,
      intakeSuffixes: config.intake.suffixes,
      maxListBytes: config.intake.maxListBytes,
      allowSpecialUse: config.scan.allowSpecialUseDomains,
      maxOutputBytes: config.scan.maxOutputBytes,
      maxDecodingRatio: config.scan.maxDecodingRatio,
      ...(config.scan.statusVocabulary ? { statusVocabulary: config.scan.statusVocabulary } : {}),
      listFields: config.scan.reconciliation.listFields,
      logger: run.logs.logger,
      ...run.timing,
    },
    { domains: [domain] },
  );
  await run.exportWritten();
  const scanned = result.summary.domains[0];
  const prefix = scanned?.manifestKey ?? scanned?.outputPrefix ?? result.summaryKey;
  if (scanned !== undefined) return { domain, state: scanned.state, where: join(run.resultsRoot, prefix) };
  // Not scanned at all: the summary says why, and so must whoever prints this.
  const { summary } = result;
  const invalid = summary.invalid[0];
  const [state, reason] = summary.rejected
    ? ['rejected', summary.rejected.reason]
    : invalid
      ? ['invalid', invalid.reason]
      : ['unknown', 'the list summary holds no entry for it'];
  return { domain, state, where: join(run.resultsRoot, prefix), reason };
}
