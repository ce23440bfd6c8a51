/**
 * Handler environment derived from the configuration (the CDK bindings and the local runner both
 * use it). Variable names come from the handlers' own readers, never restated here.
 */
import { POLL_VARIABLES } from '#core/scan/poll-schedule';
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
  return vocabulary === undefined ? {} : { STATUS_VOCABULARY: JSON.stringify(vocabulary) };
}
