/**
 * The breach workflow's steps, one per Task state of the BreachReport state machine
 * (docs/contracts.md). Plain functions over `BreachDeps`: the handlers, the local runner and the
 * tests call the same code.
 */
import { InvalidInputError } from '#core/errors';
import { parseWith } from '#core/schema';
import { archiveReport } from './archive.ts';
import { type ArchiveOutput, reconOutputSchema } from './contracts.ts';
import type { BreachDeps } from './deps.ts';

export { archiveReport } from './archive.ts';
export { recon } from './recon.ts';
export { recordBreachFailure, writeBreachManifest } from './records.ts';

/** ArchiveReport: the report a successful recon named, archived on behalf of this run. */
export async function archiveRunReport(deps: BreachDeps, event: unknown): Promise<ArchiveOutput> {
  const state = parseWith(reconOutputSchema, event);
  const { status, reportName, reconKey } = state.recon;
  if (status !== 'success' || reportName === undefined) {
    throw new InvalidInputError('recon', "must be a 'success' with a reportName to archive a report");
  }
  const archive = await archiveReport(deps, reportName, { origin: 'workflow', reconKey });
  return { ...state, archive };
}
