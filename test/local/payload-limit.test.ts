/**
 * Local runs hold every Task to Step Functions' payload quota (256 KiB of UTF-8 JSON for a state's
 * input and a task's result): past it the execution fails with States.DataLimitExceeded, which
 * neither `States.ALL` nor a Retry matches, exactly as in AWS. aws-local-stepfunctions itself
 * enforces none of it.
 */
import { ExecutionError } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import {
  asJson,
  type JSONValue,
  localStateMachine,
  MAX_STATE_PAYLOAD_BYTES,
} from '#local/runner/task-binding';

/** A Task with a Retry and a Catch on everything, the way every pipeline task is wired. */
const DEFINITION = {
  StartAt: 'Work',
  States: {
    Work: {
      Type: 'Task',
      Resource: 'arn:aws:lambda:us-east-1:123456789012:function:work',
      Retry: [{ ErrorEquals: ['States.ALL'], MaxAttempts: 2, IntervalSeconds: 0 }],
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: 'Caught' }],
      End: true,
    },
    Caught: { Type: 'Pass', End: true },
  },
};

/** A JSON string field that makes the whole value `bytes` long when serialised. */
function sized(bytes: number, character = 'x'): { readonly blob: string } {
  const overhead = JSON.stringify({ blob: '' }).length;
  const per = Buffer.byteLength(character, 'utf8');
  return { blob: character.repeat(Math.floor((bytes - overhead) / per)) };
}

async function run(
  input: unknown,
  result: unknown,
): Promise<{ output?: unknown; error?: Error; calls: number }> {
  let calls = 0;
  const machine = localStateMachine(DEFINITION);
  const execution = machine.run(input as JSONValue, {
    overrides: {
      taskResourceLocalHandlers: {
        Work: asJson(async () => {
          calls += 1;
          return result;
        }, 'Work'),
      },
    },
  });
  try {
    return { output: await execution.result, calls };
  } catch (error) {
    return { error: error instanceof ExecutionError ? (error.cause as Error) : (error as Error), calls };
  }
}

describe('local Task payload quota', () => {
  it.each([
    ['a result one byte over 256 KiB', {}, sized(MAX_STATE_PAYLOAD_BYTES + 1), 'The result of Work'],
    ['a 1 MiB result', {}, sized(1024 * 1024), 'The result of Work'],
    [
      'a result of multi-byte characters, over in UTF-8 bytes only',
      {},
      sized(MAX_STATE_PAYLOAD_BYTES + 3, 'é'),
      'The result of Work',
    ],
    ['an input over 256 KiB', sized(MAX_STATE_PAYLOAD_BYTES + 1), { ok: true }, 'The input of Work'],
  ])('fails %s with States.DataLimitExceeded, past Retry and Catch', async (_label, input, result, what) => {
    const outcome = await run(input, result);

    expect(outcome.output).toBeUndefined();
    expect(outcome.error?.name).toBe('States.DataLimitExceeded');
    expect(outcome.error?.message).toMatch(what);
    // Not retried: a terminal error.
    expect(outcome.calls).toBeLessThanOrEqual(1);
  });

  it('passes a result of exactly 256 KiB', async () => {
    const result = sized(MAX_STATE_PAYLOAD_BYTES);
    expect(Buffer.byteLength(JSON.stringify(result))).toBe(MAX_STATE_PAYLOAD_BYTES);

    const outcome = await run({}, result);

    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toEqual(result);
  });
});
