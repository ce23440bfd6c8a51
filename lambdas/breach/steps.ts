/**
 * The breach workflow's steps, one per Task state of the BreachReport state machine
 * (docs/contracts.md). Plain functions over `BreachDeps`: the handlers, the local runner and the
 * tests call the same code.
 */
export { archiveReport, archiveRunReport } from './archive-breach-report.ts';
export { recon } from './breach-recon.ts';
export { recordBreachFailure } from './record-breach-failure.ts';
export { writeBreachManifest } from './write-breach-manifest.ts';
