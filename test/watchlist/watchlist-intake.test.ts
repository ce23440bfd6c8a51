/**
 * The watchlist's start function is the platform's object intake bound to the watchlist: its
 * machine, prefix and suffixes from the environment, the watchlist's input schema, and its own
 * name in the logs (an operator reading a watchlist upload's log must not see "domain list").
 */
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '#lambdas/platform/errors';
import { startRuns } from '#lambdas/platform/runs/intake';
import { createObservability } from '#lambdas/platform/runtime/observability';
import { watchlistIntakeDepsFromEnvironment } from '#lambdas/watchlist/deps';
import { createMemoryLogger } from '../kit/loggers.ts';
import { uploadEvent } from '../kit/s3-events.ts';

const WATCHLIST_MACHINE = 'arn:aws:states:us-east-1:123456789012:stateMachine:WatchlistRun';
const ENVIRONMENT = {
  WATCHLIST_STATE_MACHINE_ARN: WATCHLIST_MACHINE,
  INTAKE_PREFIX: 'watchlists/',
  INTAKE_SUFFIXES: '.csv',
  INPUT_BUCKET: 'input',
};
const sfnMock = mockClient(SFNClient);
// The mock patches SFNClient for the whole worker: put it back for the files that run next.
afterAll(() => sfnMock.restore());

function watchlistIntake() {
  const logger = createMemoryLogger();
  const deps = {
    ...watchlistIntakeDepsFromEnvironment(ENVIRONMENT, createObservability(ENVIRONMENT, 'watchlists')),
    logger,
  };
  return { deps, logger };
}

describe('the watchlist intake', () => {
  beforeEach(() => {
    sfnMock.reset();
    sfnMock.on(StartExecutionCommand).callsFake((input: { name?: string }) => ({
      executionArn: `${WATCHLIST_MACHINE.replace(':stateMachine:', ':execution:')}:${input.name}`,
    }));
  });

  it('starts the watchlist machine for a watchlist upload and names it a watchlist run in the log', async () => {
    // Prepare
    const { deps, logger } = watchlistIntake();

    // Act
    const decisions = await startRuns(deps, uploadEvent('watchlists/people.csv'));

    // Assess
    expect(decisions).toMatchObject([{ key: 'watchlists/people.csv', action: 'started' }]);
    expect(sfnMock.commandCalls(StartExecutionCommand)[0]?.args[0].input.stateMachineArn).toBe(
      WATCHLIST_MACHINE,
    );
    expect(logger.lines.map((line) => line.message)).toEqual(['watchlist run started']);
    expect(logger.text()).not.toContain('domain list');
  });

  it('ignores an upload outside its prefix, saying it is not a watchlist', async () => {
    // Prepare
    const { deps, logger } = watchlistIntake();

    // Act
    const decisions = await startRuns(deps, uploadEvent('incoming/domains.csv'));

    // Assess
    expect(decisions).toMatchObject([{ action: 'ignored', reason: 'not under watchlists/' }]);
    expect(sfnMock.commandCalls(StartExecutionCommand)).toHaveLength(0);
    expect(logger.lines.map((line) => line.message)).toEqual(['object is not a watchlist; ignored']);
  });

  it("refuses a schedule fire the watchlist's schema refuses (inline domains are a domain list's)", async () => {
    // Prepare
    const { deps } = watchlistIntake();
    const fire = {
      source: {
        type: 'schedule',
        scheduleName: 'weekly',
        scheduledTime: '2026-11-25T00:00:00Z',
        domains: ['a.example'],
      },
    };

    // Act
    const started = startRuns(deps, fire);

    // Assess
    await expect(started).rejects.toBeInstanceOf(InvalidInputError);
    expect(sfnMock.commandCalls(StartExecutionCommand)).toHaveLength(0);
  });
});
