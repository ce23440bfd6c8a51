/**
 * lambdaTask on a bare Stack: the Task state it renders for a PipelineFunction (plain payloads,
 * a timeout just past the function's, only the retries it is given plus the vendor-auth retry the
 * registry asks for), and its refusal of a state the registry does not bind to the handler.
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import { TaskInput } from 'aws-cdk-lib/aws-stepfunctions';
import type { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { describe, expect, it } from 'vitest';
import { type HandlerFile, registeredHandler } from '../../lambdas/registry.ts';
import { PipelineFunction } from '../../lib/platform/pipeline-function.ts';
import { lambdaTask } from '../../lib/platform/pipeline-state-machine.ts';
import { IDEMPOTENT_TASK_RETRY } from '../../lib/platform/retry-policies.ts';
import { bareStack } from '../kit/stack.ts';

interface Rendered {
  readonly stack: Stack;
  readonly fn: PipelineFunction;
  readonly state: Record<string, unknown>;
}

function render(
  handlerFile: HandlerFile,
  stateName: string,
  options: Parameters<typeof lambdaTask>[3] = {},
): Rendered {
  const stack = bareStack();
  const fn = new PipelineFunction(stack, 'Fn', {
    handler: registeredHandler(handlerFile),
    timeout: Duration.seconds(30),
  });
  const task: LambdaInvoke = lambdaTask(stack, stateName, fn, options);
  return { stack, fn, state: stack.resolve(task.toStateJson()) as Record<string, unknown> };
}

function refusal(handlerFile: HandlerFile, stateName: string): { message: string; stack: Stack } {
  const stack = bareStack();
  const fn = new PipelineFunction(stack, 'Fn', {
    handler: registeredHandler(handlerFile),
    timeout: Duration.seconds(30),
  });
  try {
    lambdaTask(stack, stateName, fn);
  } catch (error) {
    return { message: (error as Error).message, stack };
  }
  throw new Error('expected lambdaTask to refuse the state');
}

const VENDOR_AUTH = {
  ErrorEquals: ['VendorAuthError'],
  IntervalSeconds: 20,
  BackoffRate: 2,
  MaxAttempts: 3,
};

describe('lambdaTask', () => {
  it('invokes the function directly, so input and output are plain payloads', () => {
    const { stack, fn, state } = render('write-scan-manifest', 'WriteManifest');

    expect(state).toMatchObject({ Type: 'Task', Resource: stack.resolve(fn.functionArn) });
    expect(state).not.toHaveProperty('Parameters');
  });

  it("times out 10 seconds after the function's own timeout", () => {
    expect(render('write-scan-manifest', 'WriteManifest').state.TimeoutSeconds).toBe(40);
  });

  it('retries nothing it was not given: no service-exception retry by default', () => {
    expect(render('write-scan-manifest', 'WriteManifest').state).not.toHaveProperty('Retry');
  });

  it('uses the Retry rule it is given', () => {
    const { state } = render('write-scan-manifest', 'WriteManifest', { retry: IDEMPOTENT_TASK_RETRY });

    expect(state.Retry).toEqual([
      expect.objectContaining({
        ErrorEquals: IDEMPOTENT_TASK_RETRY.errors,
        IntervalSeconds: 5,
        MaxAttempts: 5,
        MaxDelaySeconds: 120,
        JitterStrategy: 'FULL',
      }),
    ]);
  });

  it('adds the vendor-auth retry after the given one when the registry says the handler calls the vendor', () => {
    const { state } = render('start-scan', 'StartScan', { retry: IDEMPOTENT_TASK_RETRY });

    expect(state.Retry).toEqual([
      expect.objectContaining({ ErrorEquals: IDEMPOTENT_TASK_RETRY.errors }),
      expect.objectContaining(VENDOR_AUTH),
    ]);
    expect(render('start-scan', 'StartScan').state.Retry).toEqual([expect.objectContaining(VENDOR_AUTH)]);
  });

  it('passes its payload and result path through', () => {
    const { state } = render('write-scan-manifest', 'WriteManifest', {
      payload: TaskInput.fromObject({ 'scan.$': '$.scan' }),
      resultPath: '$.manifest',
    });

    expect(state).toMatchObject({ Parameters: { 'scan.$': '$.scan' }, ResultPath: '$.manifest' });
  });

  it('refuses a state the registry declares for another handler', () => {
    const { message, stack } = refusal('write-scan-manifest', 'StartScan');

    expect(message).toBe(
      "Task state 'StartScan' invokes write-scan-manifest, but lambdas/registry.ts declares it for WriteManifest",
    );
    // Refused before the task was created.
    expect(stack.node.tryFindChild('StartScan')).toBeUndefined();
  });

  it('lists every state the registry declares for the handler when it refuses', () => {
    expect(refusal('fetch-scan-output', 'FetchEverything').message).toBe(
      "Task state 'FetchEverything' invokes fetch-scan-output, but lambdas/registry.ts declares it for FetchReport, FetchLogs, FetchDebug",
    );
  });

  it('refuses any Task state for a handler declared for none (a scheduled one)', () => {
    expect(refusal('reconcile-scans', 'ReconcileScans').message).toBe(
      "Task state 'ReconcileScans' invokes reconcile-scans, but lambdas/registry.ts declares it for no Task state",
    );
  });
});
