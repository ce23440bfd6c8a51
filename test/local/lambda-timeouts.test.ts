/**
 * Each local invocation ends at its function's synthesized timeout, with the error Step Functions
 * reports for a Lambda timeout (`Sandbox.Timedout`, "Task timed out after N.00 seconds").
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LambdaTimeoutError, withLambdaTimeout } from '#local/runner/task-binding';
import {
  type AslDefinition,
  breachReportStateMachine,
  lambdaTimeoutSeconds,
  scanDomainStateMachine,
} from '#local/synth/definitions';
import { cachedTemplate } from '#local/synth/synth-cache';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';

let scan: AslDefinition;
let breach: AslDefinition;
beforeAll(async () => {
  const template = await cachedTemplate(DEFAULT_PIPELINE_CONFIG);
  scan = scanDomainStateMachine(template).definition;
  breach = breachReportStateMachine(template).definition;
}, 180_000);

describe('the synthesized function timeouts', () => {
  it('are known for every Task state of ScanDomain and BreachReport', () => {
    expect(lambdaTimeoutSeconds(scan, 'StartScan')).toBe(150);
    expect(lambdaTimeoutSeconds(scan, 'PollScanStatus')).toBe(80);
    expect(lambdaTimeoutSeconds(scan, 'FetchReport')).toBe(900);
    expect(lambdaTimeoutSeconds(breach, 'Recon')).toBeGreaterThan(0);
    expect(lambdaTimeoutSeconds(breach, 'ArchiveReport')).toBeGreaterThan(0);
  });
});

describe('withLambdaTimeout', () => {
  it('ends an invocation that runs past its timeout with Sandbox.Timedout', async () => {
    const started = Date.now();
    const error = await withLambdaTimeout(() => new Promise(() => {}), 200, 0.2).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LambdaTimeoutError);
    expect(error).toMatchObject({ name: 'Sandbox.Timedout', message: 'Task timed out after 0.20 seconds' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('passes on what an invocation returns or throws in time', async () => {
    await expect(withLambdaTimeout(async () => 'done', 1_000, 1)).resolves.toBe('done');
    await expect(withLambdaTimeout(async () => Promise.reject(new Error('own')), 1_000, 1)).rejects.toThrow(
      'own',
    );
  });
});
