/** Scheduled: archive every report the vendor lists that has no verified archive yet. */

import type { BreachDeps } from '#lambdas/breach/deps';
import { type ReconcileResult, reconcileReports } from '#lambdas/breach/reconcile';
import {
  type BreachReconcileSettings,
  breachReconcileSettingsFromEnv,
} from '#lambdas/breach/reconcile-settings';
import { breachDepsFromEnvironment } from '#lambdas/breach/vendor-deps';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';

export type BreachReconcileDeps = BreachDeps & { readonly reconcile?: BreachReconcileSettings };

export function createReconcileBreachReportsHandler(
  deps: BreachReconcileDeps,
): Handler<unknown, ReconcileResult> {
  // The schedule's input carries nothing the run needs: what to do comes from the vendor's list.
  // Lambda's clock decides when to stop starting archives; the next run takes the rest.
  return async (_event, context) => {
    const timeLeftMs = context?.getRemainingTimeInMillis?.bind(context);
    return reconcileReports(deps, {
      ...(deps.reconcile ? { settings: deps.reconcile } : {}),
      ...(timeLeftMs ? { timeLeftMs } : {}),
    });
  };
}

export const handler = createLazyHandler({
  deps: (tools): BreachReconcileDeps => ({
    ...breachDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
    reconcile: breachReconcileSettingsFromEnv(process.env),
  }),
  handler: createReconcileBreachReportsHandler,
});
