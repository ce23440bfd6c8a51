/** Scheduled: archive every report the vendor lists that has no verified archive yet. */
import { breachDepsFromEnvironment } from '#core/runtime/breach-vendor-deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { tracedS3Client } from '#core/runtime/s3-client';
import type { BreachDeps } from '#core/workflows/breach/deps';
import { type ReconcileResult, reconcileReports } from '#core/workflows/breach/reconcile';

export function createReconcileBreachReportsHandler(deps: BreachDeps): Handler<unknown, ReconcileResult> {
  // The schedule's input carries nothing the run needs: what to do comes from the vendor's list.
  return async () => reconcileReports(deps);
}

export const handler = createLazyHandler({
  deps: (tools) => breachDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createReconcileBreachReportsHandler,
});
