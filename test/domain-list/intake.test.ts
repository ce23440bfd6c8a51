import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDomainListInput } from '#lambdas/domain-list/contracts';
import { InvalidInputError } from '#lambdas/platform/errors';
import { type IntakeDeps, startScheduledRun, startUploadedRuns } from '#lambdas/platform/runs/intake';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';
import { createStartDomainListHandler } from '../../lambdas/domain-list/start-domain-list.ts';
import { uploadEvent } from '../kit/s3-events.ts';

const STATE_MACHINE_ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:DomainListScan';
const sfnMock = mockClient(SFNClient);
// The mock patches SFNClient for the whole worker: put it back for the files that run next.
afterAll(() => sfnMock.restore());

/**
 * A small stateful Step Functions: execution names are unique per state machine, as in AWS. A second
 * StartExecution with a used name and different input fails with ExecutionAlreadyExists; with the
 * same input while running it returns the same execution (AWS's idempotent behaviour).
 */
function installStatefulStepFunctions(): Map<string, string> {
  const executions = new Map<string, string>();
  sfnMock
    .on(StartExecutionCommand)
    .callsFake((input: { name?: string; input?: string; stateMachineArn?: string }) => {
      const name = input.name ?? `auto-${executions.size}`;
      const existing = executions.get(name);
      if (existing !== undefined && existing !== input.input) {
        throw new ExecutionAlreadyExists({ message: `Execution Already Exists: '${name}'`, $metadata: {} });
      }
      executions.set(name, input.input ?? '');
      return {
        executionArn: `${input.stateMachineArn?.replace(':stateMachine:', ':execution:')}:${name}`,
        startDate: new Date(),
      };
    });
  return executions;
}

const logs: string[] = [];
const logger: VendorLogger = {
  debug: (m, e) => logs.push(`${m} ${JSON.stringify(e)}`),
  info: (m, e) => logs.push(`${m} ${JSON.stringify(e)}`),
  warn: (m, e) => logs.push(`${m} ${JSON.stringify(e)}`),
  error: (m, e) => logs.push(`${m} ${JSON.stringify(e)}`),
};

function deps(): IntakeDeps {
  return {
    sfn: new SFNClient({ region: 'us-east-1' }),
    parseInput: parseDomainListInput,
    runKind: 'domain list',
    logger,
    settings: {
      stateMachineArn: STATE_MACHINE_ARN,
      prefix: 'incoming/',
      suffixes: ['.txt', '.csv'],
      inputBucket: 'input',
    },
  };
}

describe('domain-list intake', () => {
  beforeEach(() => {
    sfnMock.reset();
    logs.length = 0;
  });

  it('starts one list run with a deterministic name and the decoded key as input', async () => {
    // Prepare
    const executions = installStatefulStepFunctions();

    // Act
    const decisions = await startUploadedRuns(deps(), uploadEvent('incoming/weekly.txt'));

    // Assess
    expect(decisions).toHaveLength(1);
    expect(decisions[0]?.action).toBe('started');
    expect(sfnMock).toHaveReceivedCommandTimes(StartExecutionCommand, 1);
    const [name, input] = [...executions.entries()][0] ?? [];
    expect(name).toMatch(/^list-[0-9a-f]{20}$/);
    expect(JSON.parse(input ?? '{}')).toEqual({
      source: { type: 's3', bucket: 'input', key: 'incoming/weekly.txt', versionId: 'v1', etag: 'e' },
    });
  });

  it('starts no second run when S3 delivers the same event twice', async () => {
    // Prepare
    installStatefulStepFunctions();
    const handler = createStartDomainListHandler(deps());
    const event = uploadEvent('incoming/weekly.txt');

    // Act
    const first = await handler(event);
    const second = await handler(event);

    // Assess
    expect(first[0]?.action).toBe('started');
    expect(second[0]?.action).toBe('started'); // same name + same input: AWS returns the same execution
    expect(
      new Set([first[0], second[0]].map((d) => (d && 'executionName' in d ? d.executionName : ''))),
    ).toHaveProperty('size', 1);
  });

  it('records a duplicate when a run of that name already exists with other input', async () => {
    // Prepare
    const executions = installStatefulStepFunctions();
    const event = uploadEvent('incoming/weekly.txt');
    await startUploadedRuns(deps(), event);
    const name = [...executions.keys()][0] ?? '';
    executions.set(name, 'something else');

    // Act
    const decisions = await startUploadedRuns(deps(), event);

    // Assess
    expect(decisions[0]).toEqual({ key: 'incoming/weekly.txt', action: 'duplicate', executionName: name });
  });

  it('starts a new run for a new version of the same key', async () => {
    const executions = installStatefulStepFunctions();
    await startUploadedRuns(deps(), uploadEvent('incoming/weekly.txt', 'v1'));
    await startUploadedRuns(deps(), uploadEvent('incoming/weekly.txt', 'v2'));
    expect(executions.size).toBe(2);
  });

  it.each([
    ['outside/list.txt', 'not under incoming/'],
    ['incoming/list.json', 'does not end with'],
    ['incoming/folder/', 'a folder marker'],
  ])('ignores %s (%s) without starting anything', async (key, reason) => {
    installStatefulStepFunctions();
    const decisions = await startUploadedRuns(deps(), uploadEvent(key));
    expect(decisions[0]).toMatchObject({ action: 'ignored' });
    expect(decisions[0] && 'reason' in decisions[0] ? decisions[0].reason : '').toContain(reason);
    expect(sfnMock).toHaveReceivedCommandTimes(StartExecutionCommand, 0);
  });

  it('decodes URL-encoded keys of classic S3 notifications (spaces, plus, unicode)', async () => {
    // Prepare
    const executions = installStatefulStepFunctions();
    const event = {
      Records: [
        {
          eventSource: 'aws:s3',
          s3: {
            bucket: { name: 'input' },
            object: { key: 'incoming/team+lists/a%2Bb+%C3%BC.txt', eTag: 'e', versionId: 'v9', size: 3 },
          },
        },
      ],
    };

    // Act
    await startUploadedRuns(deps(), event);

    // Assess
    const input = JSON.parse([...executions.values()][0] ?? '{}') as { source: { key: string } };
    expect(input.source.key).toBe('incoming/team lists/a+b ü.txt');
  });

  it('lets other Step Functions errors fail the invocation so EventBridge retries it', async () => {
    sfnMock.on(StartExecutionCommand).rejects(new Error('Rate exceeded'));
    await expect(startUploadedRuns(deps(), uploadEvent('incoming/weekly.txt'))).rejects.toThrow(
      'Rate exceeded',
    );
  });
});

describe('scheduled list starts', () => {
  beforeEach(() => {
    sfnMock.reset();
    logs.length = 0;
  });

  function fire(scheduledTime: string) {
    return {
      source: {
        type: 'schedule',
        scheduleName: 'nightly',
        scheduledTime,
        bucket: 'input',
        key: 'lists/critical.txt',
      },
    };
  }

  it('starts one list run per schedule fire, however often the Scheduler retries that fire', async () => {
    // Prepare
    const executions = installStatefulStepFunctions();
    const handler = createStartDomainListHandler(deps());

    // Act
    const first = await handler(fire('2026-11-20T02:00:00Z'));
    const retried = await handler(fire('2026-11-20T02:00:00Z'));
    const nextNight = await handler(fire('2026-11-21T02:00:00Z'));

    // Assess
    expect([first[0]?.action, retried[0]?.action, nextNight[0]?.action]).toEqual([
      'started',
      'started', // same name + same input: AWS returns the execution it already started
      'started',
    ]);
    expect(executions.size).toBe(2);
    const names = [...executions.keys()];
    expect(names.every((name) => /^list-[0-9a-f]{20}$/.test(name))).toBe(true);
    expect(JSON.parse(executions.get(names[0] ?? '') ?? '{}')).toEqual(fire('2026-11-20T02:00:00Z'));
  });

  it('refuses a schedule fire without a scheduled time with InvalidInputError naming the field', async () => {
    // Prepare
    installStatefulStepFunctions();
    const { scheduledTime: _, ...withoutTime } = fire('2026-11-20T02:00:00Z').source;

    // Act
    const started = startScheduledRun(deps(), { source: withoutTime });

    // Assess
    await expect(started).rejects.toBeInstanceOf(InvalidInputError);
    await expect(started).rejects.toThrow('source.scheduledTime');
    expect(sfnMock).toHaveReceivedCommandTimes(StartExecutionCommand, 0);
  });
});
