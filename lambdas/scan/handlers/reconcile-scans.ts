/** Scheduled: archive every finished scan the vendor lists that has no manifest, and publish the vendor's counts. */
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { reconcileScans, type ScanReconcileDeps, type ScanReconcileResult } from '#lambdas/scan/reconcile';
import { scanReconcileDepsFromEnvironment } from '#lambdas/scan/reconcile-deps';

export function createReconcileScansHandler(deps: ScanReconcileDeps): Handler<unknown, ScanReconcileResult> {
  // The schedule's input carries nothing the run needs: what to do comes from the vendor's list.
  // Lambda's clock decides when to stop starting archives; the next run takes the rest.
  return async (_event, context) => {
    const timeLeftMs = context?.getRemainingTimeInMillis?.bind(context);
    return reconcileScans(deps, timeLeftMs ? { timeLeftMs } : {});
  };
}

export const handler = createLazyHandler({
  deps: (tools) => scanReconcileDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createReconcileScansHandler,
});
