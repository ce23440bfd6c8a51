/**
 * `npm run redrive` as an operator runs it: anything but a list or watchlist run's execution ARN is
 * answered with what is wrong and the usage, exit 2, before any AWS call (no credentials are set
 * here, so a call would fail otherwise). The redrive itself, against Step Functions (no local
 * stand-in), is in redrive.test.ts.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ProcessRun, runProcess } from '../kit/child-process.ts';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

function npmRunRedrive(args: readonly string[]): Promise<ProcessRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_REGION: 'eu-west-1' };
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_PROFILE', 'AWS_SESSION_TOKEN'])
    delete env[name];
  return runProcess('npm', ['run', '--silent', 'redrive', '--', ...args], { cwd: PROJECT_ROOT, env });
}

describe('npm run redrive', () => {
  it.each([
    ['a state machine ARN', 'arn:aws:states:eu-west-1:111122223333:stateMachine:DomainListScan'],
    ['text', 'last-nights-run'],
  ])(
    'answers %s with its error and the usage (exit 2)',
    async (_what, arg) => {
      const run = await npmRunRedrive([arg]);

      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`error: ${arg} is not a Step Functions execution ARN`);
      expect(run.stderr).toContain(
        'usage: npm run redrive -- EXECUTION_ARN (a DomainListScan or WatchlistRun execution)',
      );
    },
    120_000,
  );
});
