/**
 * Breach reconciliation: the scheduled function that archives every breach report the vendor lists
 * and the archive lacks (lambdas/breach/reconcile-breach-reports.ts). The stack builds it as a
 * `ScheduledCatchUp` under these names.
 */

import { registeredHandler } from '#lambdas/registry';
import type { CatchUpNames } from '../../platform/scheduled-catch-up.ts';

export const BREACH_RECONCILIATION = {
  handler: registeredHandler('reconcile-breach-reports'),
  functionId: 'ReconcileFunction',
  deadLetterPurpose: 'breach reconciliation runs that failed or could not be delivered',
  scheduleDescription: 'archive breach reports the workflow never archived',
} as const satisfies CatchUpNames;
