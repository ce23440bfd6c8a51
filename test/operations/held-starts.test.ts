/**
 * The pause switch end to end around the real intake handler: uploads and schedule fires that
 * arrive while paused start nothing, wait in the intake's dead-letter queue as Lambda's on-failure
 * records, and start on resume, each exactly once. SQS, Lambda and Step Functions have no local
 * stand-in: stateful fakes behind aws-sdk-client-mock play them, Lambda's part being what its
 * asynchronous invocation does with a function error (retries spent, then the destination record).
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDomainListInput } from '#lambdas/domain-list/contracts';
import { ConfigurationError } from '#lambdas/platform/errors';
import { heldStartIn, resumePausedStarts } from '#lambdas/platform/runs/held-starts';
import type { IntakeDeps } from '#lambdas/platform/runs/intake';
import { PipelinePausedError, pauseSwitch } from '#lambdas/platform/runs/pause';
import { createStartDomainListHandler } from '../../lambdas/domain-list/start-domain-list.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { uploadEvent } from '../kit/s3-events.ts';

const FUNCTION_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:IntakeStartDomainListFunction';
const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/IntakeDeadLetterQueue';
const MACHINE = 'arn:aws:states:eu-west-1:123456789012:stateMachine:DomainListScan';

const sfn = mockClient(SFNClient);
const sqs = mockClient(SQSClient);
const lambda = mockClient(LambdaClient);
// The mocks patch the client classes for the whole worker: put them back for the files that run next.
afterAll(() => {
  sfn.restore();
  sqs.restore();
  lambda.restore();
});

let executions: Map<string, string>;
let queue: { id: number; body: string; receipt: string; visibleAt: number }[];
let now: number;
let state: { value: string };
let invokes: { FunctionName?: string; InvocationType?: string }[];

const fire = {
  source: {
    type: 'schedule',
    scheduleName: 'nightly',
    scheduledTime: '2026-11-23T02:00:00Z',
    domains: ['example.com'],
  },
};

/** What Lambda writes to the on-failure destination once an async invocation's retries are spent. */
function onFailureRecord(event: unknown, error: Error): string {
  return JSON.stringify({
    version: '1.0',
    timestamp: new Date(now).toISOString(),
    requestContext: {
      requestId: 'r',
      functionArn: `${FUNCTION_ARN}:$LATEST`,
      condition: 'RetriesExhausted',
      approximateInvokeCount: 3,
    },
    requestPayload: event,
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    responsePayload: { errorType: error.name, errorMessage: error.message, trace: [] },
  });
}

function intakeDeps(): IntakeDeps {
  return {
    sfn: new SFNClient({ region: 'eu-west-1' }),
    parseInput: parseDomainListInput,
    runKind: 'domain list',
    logger: createMemoryLogger(),
    settings: { stateMachineArn: MACHINE, prefix: 'incoming/', suffixes: ['.txt'], inputBucket: 'input' },
    pause: pauseSwitch('/pipeline/paused', async () => state.value),
  };
}

/** The intake function as Lambda runs it asynchronously: an error ends in the dead-letter queue. */
async function deliver(event: unknown): Promise<void> {
  try {
    await createStartDomainListHandler(intakeDeps())(event);
  } catch (error) {
    await new SQSClient({ region: 'eu-west-1' }).send(
      new SendMessageCommand({ QueueUrl: QUEUE_URL, MessageBody: onFailureRecord(event, error as Error) }),
    );
  }
}

function resumeDeps() {
  return {
    sqs: new SQSClient({ region: 'eu-west-1' }),
    lambda: new LambdaClient({ region: 'eu-west-1' }),
    pause: pauseSwitch('/pipeline/paused', async () => state.value),
    logger: createMemoryLogger(),
    queueUrls: [QUEUE_URL],
  };
}

beforeEach(() => {
  executions = new Map();
  queue = [];
  now = Date.parse('2026-11-23T03:00:00Z');
  state = { value: 'paused' };
  invokes = [];
  let nextId = 0;
  sfn.on(StartExecutionCommand).callsFake((input: { name: string; input: string }) => {
    if (executions.has(input.name)) throw new ExecutionAlreadyExists({ message: 'exists', $metadata: {} });
    executions.set(input.name, input.input);
    return {
      executionArn: `${MACHINE.replace(':stateMachine:', ':execution:')}:${input.name}`,
      startDate: new Date(),
    };
  });
  sqs.on(SendMessageCommand).callsFake((input: { MessageBody: string }) => {
    nextId += 1;
    queue.push({ id: nextId, body: input.MessageBody, receipt: `r-${nextId}-0`, visibleAt: 0 });
    return { MessageId: String(nextId) };
  });
  sqs
    .on(ReceiveMessageCommand)
    .callsFake((input: { MaxNumberOfMessages?: number; VisibilityTimeout?: number }) => {
      const visible = queue.filter((m) => m.visibleAt <= now).slice(0, input.MaxNumberOfMessages ?? 1);
      for (const m of visible) {
        m.visibleAt = now + (input.VisibilityTimeout ?? 30) * 1000;
        m.receipt = `r-${m.id}-${now}-${Math.random()}`;
      }
      return {
        Messages: visible.map((m) => ({ MessageId: String(m.id), Body: m.body, ReceiptHandle: m.receipt })),
      };
    });
  sqs.on(DeleteMessageCommand).callsFake((input: { ReceiptHandle: string }) => {
    queue = queue.filter((m) => m.receipt !== input.ReceiptHandle);
    return {};
  });
  lambda
    .on(InvokeCommand)
    .callsFake(async (input: { FunctionName: string; InvocationType: string; Payload: Uint8Array }) => {
      invokes.push({ FunctionName: input.FunctionName, InvocationType: input.InvocationType });
      // An asynchronous invoke: the function runs (as Lambda would), its errors go to the queue again.
      await deliver(JSON.parse(new TextDecoder().decode(input.Payload)));
      return { StatusCode: 202 };
    });
});
afterEach(() => {
  sfn.reset();
  sqs.reset();
  lambda.reset();
});

describe('the pause switch', () => {
  it('starts nothing while paused: uploads and schedule fires wait in the dead-letter queue', async () => {
    await expect(
      createStartDomainListHandler(intakeDeps())(uploadEvent('incoming/a.txt', 'v1')),
    ).rejects.toBeInstanceOf(PipelinePausedError);
    await deliver(uploadEvent('incoming/a.txt', 'v1'));
    await deliver(fire);

    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(0);
    expect(queue.map((m) => heldStartIn(m.body)?.functionArn)).toEqual([FUNCTION_ARN, FUNCTION_ARN]);
  });

  it('picks every held start up on resume, exactly once, and leaves other failures for a human', async () => {
    // Prepare: two uploads and a fire while paused; one unrelated failure and one delivery failure.
    await deliver(uploadEvent('incoming/a.txt', 'v1'));
    await deliver(uploadEvent('incoming/b.txt', 'v7'));
    await deliver(fire);
    queue.push({
      id: 90,
      body: onFailureRecord(
        uploadEvent('incoming/c.txt', 'v1'),
        Object.assign(new Error('x'), { name: 'AccessDeniedException' }),
      ),
      receipt: 'r-90',
      visibleAt: 0,
    });
    queue.push({
      id: 91,
      body: JSON.stringify(uploadEvent('incoming/d.txt', 'v1')),
      receipt: 'r-91',
      visibleAt: 0,
    });

    // Act: a resume while still paused does nothing; after the switch, everything held starts.
    const early = await resumePausedStarts(resumeDeps());
    state.value = 'running';
    const resumed = await resumePausedStarts(resumeDeps());
    now += 10 * 60_000;
    const again = await resumePausedStarts(resumeDeps());

    // Assess
    expect(early).toEqual({ paused: true, replayed: 0, left: 0 });
    expect(resumed).toEqual({ paused: false, replayed: 3, left: 2 });
    expect(invokes).toEqual(Array(3).fill({ FunctionName: FUNCTION_ARN, InvocationType: 'Event' }));
    expect([...executions.keys()]).toHaveLength(3);
    const started = [...executions.values()].map((input) => JSON.parse(input).source);
    expect(started.map((s) => s.key ?? s.scheduleName).sort()).toEqual([
      'incoming/a.txt',
      'incoming/b.txt',
      'nightly',
    ]);
    expect(again).toEqual({ paused: false, replayed: 0, left: 2 });
    expect(queue.map((m) => m.id)).toEqual([90, 91]);
  });

  it('replays an upload that started anyway without a second run (deterministic names)', async () => {
    await deliver(uploadEvent('incoming/a.txt', 'v1'));
    await deliver(uploadEvent('incoming/a.txt', 'v1'));
    state.value = 'running';

    const resumed = await resumePausedStarts(resumeDeps());

    expect(resumed.replayed).toBe(2);
    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(2);
    expect(executions.size).toBe(1);
    expect(queue).toEqual([]);
  });

  it('refuses a switch value that is neither running nor paused, naming the parameter', async () => {
    state.value = 'off';
    const error = await createStartDomainListHandler(intakeDeps())(uploadEvent('incoming/a.txt', 'v1')).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/\/pipeline\/paused.*must be "running" or "paused"/);
    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(0);
  });
});
