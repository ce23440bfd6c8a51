/** The AWS side of `ExecutionLookup` (#lambdas/platform/fan-out-results). */
import { DescribeExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import type { ExecutionLookup } from '#lambdas/platform/runs/fan-out-results';

/**
 * DescribeExecution on a child machine's executions: a child's ARN is the machine's with
 * `:stateMachine:` turned into `:execution:` and its name appended.
 */
export function sfnExecutionLookup(sfn: SFNClient, childStateMachineArn: string): ExecutionLookup {
  const executionPrefix = `${childStateMachineArn.replace(':stateMachine:', ':execution:')}:`;
  return {
    async describe(executionName) {
      const execution = await sfn.send(
        new DescribeExecutionCommand({ executionArn: executionPrefix + executionName }),
      );
      const status = execution.status ?? 'UNKNOWN';
      if (status === 'SUCCEEDED') return { status, output: execution.output };
      if (status === 'FAILED' || status === 'TIMED_OUT' || status === 'ABORTED') {
        return { status, error: execution.error, cause: execution.cause };
      }
      return { status };
    },
  };
}
