/**
 * Handler environment derived from the configuration (the CDK bindings and the local runner both
 * use it). Variable names come from the handlers' own readers, never restated here.
 */

import type { StatsFields } from '#lambdas/operations/stats-fields';
import { OPERATIONS_VARIABLES } from '#lambdas/operations/variables';
import { ALLOW_SPECIAL_USE_VARIABLE } from '#lambdas/platform/input/validation';
import { POLL_VARIABLES } from '#lambdas/scan/poll-schedule';
import type { ListFields } from '#lambdas/scan/reconcile-settings';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';
import type { PollConfig, StatusVocabularyConfig } from './schema.ts';

/** The poll-loop variables the start and poll handlers read (docs/contracts.md). */
export function pollEnvironment(poll: PollConfig): Record<string, string> {
  return Object.fromEntries(
    (Object.keys(POLL_VARIABLES) as (keyof PollConfig)[]).map((field) => [
      POLL_VARIABLES[field],
      String(poll[field]),
    ]),
  );
}

/** `STATUS_VOCABULARY` when a vocabulary is configured; nothing otherwise (handlers use their own). */
export function statusVocabularyEnvironment(
  vocabulary: StatusVocabularyConfig | undefined,
): Record<string, string> {
  return vocabulary === undefined ? {} : { [SCAN_VARIABLES.statusVocabulary]: JSON.stringify(vocabulary) };
}

/** `SCAN_LIST_FIELDS` when any listing field is configured; nothing otherwise (the common names). */
export function scanListFieldsEnvironment(listFields: ListFields | undefined): Record<string, string> {
  return listFields === undefined || Object.keys(listFields).length === 0
    ? {}
    : { [SCAN_VARIABLES.listFields]: JSON.stringify(listFields) };
}

/** `ALLOW_SPECIAL_USE_DOMAINS` when special-use suffixes are allowed; nothing otherwise. */
export function allowSpecialUseEnvironment(suffixes: readonly string[] | undefined): Record<string, string> {
  return suffixes === undefined || suffixes.length === 0
    ? {}
    : { [ALLOW_SPECIAL_USE_VARIABLE]: suffixes.join(',') };
}

/** `VENDOR_STATS_FIELDS` when either count's path is configured; nothing otherwise (the status words). */
export function vendorStatsFieldsEnvironment(statsFields: StatsFields | undefined): Record<string, string> {
  const configured = Object.entries(statsFields ?? {}).filter(([, path]) => path !== undefined);
  return configured.length === 0
    ? {}
    : { [OPERATIONS_VARIABLES.vendorStatsFields]: JSON.stringify(Object.fromEntries(configured)) };
}
