/**
 * The end of the synthesized ScanDomain failure path when RecordFailure itself cannot run: the
 * execution must still end in the Fail state with the scan's own failure label, not as the
 * recorder's raw task error (which the list run could not classify).
 */
import { describe, expect, it } from 'vitest';
import { executionEnd, type Handler, retriedStates } from '../local/harness.ts';
import { execute as executeWith, useScanExecution } from './scan-execution-fixture.ts';

useScanExecution({ pollsToFinish: 1 });

/** A recorder that always throws `errorName`, counting its calls. */
function brokenRecorder(errorName: string): { handler: Handler; calls: () => number } {
  let calls = 0;
  return {
    handler: async () => {
      calls += 1;
      const error = new Error(`${errorName} (injected by the test)`);
      error.name = errorName;
      throw error;
    },
    calls: () => calls,
  };
}

function execute(domain: string, recorder: Handler) {
  return executeWith(domain, { wrap: (bound) => ({ ...bound, RecordFailure: recorder }) });
}

describe('RecordFailure failing itself', () => {
  it('still ends in Failed with the scan failure label, saying it was not recorded and why', async () => {
    const recorder = brokenRecorder('TypeError');

    const run = await execute('broken.example.com', recorder.handler);

    const end = executionEnd(run.events);
    expect(end).toMatchObject({ status: 'failed', error: 'ScanFailed' });
    expect(end.cause).toContain('not recorded: RecordFailure failed with TypeError');
    expect(run.path.slice(-4)).toEqual(['MarkScanFailed', 'RecordFailure', 'FailureNotRecorded', 'Failed']);
    expect(recorder.calls()).toBe(1);
  });

  it('retries a Lambda service error first, then keeps the label once the retries are spent', async () => {
    const recorder = brokenRecorder('Lambda.ServiceException');

    const run = await execute('broken.example.com', recorder.handler);

    expect(executionEnd(run.events)).toMatchObject({ status: 'failed', error: 'ScanFailed' });
    expect(retriedStates(run.events)).toContain('RecordFailure');
    expect(recorder.calls()).toBeGreaterThan(1);
    expect(run.path.at(-1)).toBe('Failed');
  });
});
