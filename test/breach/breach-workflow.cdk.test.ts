/**
 * The BreachReport state machine and its functions, as synthesized: the shape the issue asks for,
 * retries that never repeat a recon blindly, and grants scoped to `breach/` of the results bucket.
 */

import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_THROTTLE_WAIT } from '#lambdas/platform/runs/throttle-wait';
import {
  type AslDefinition,
  actionsAllowed,
  allStates,
  functionFor,
  grantsOf,
  resourcesAllowed,
  retriedErrors,
  retriesOf,
  type Synthesized,
  stateMachineWith,
  stateNamed,
  synth,
} from '../kit/synth.ts';
import { BREACH_SETTINGS } from './breach-settings.ts';

let synthesized: Synthesized;
let machine: ReturnType<typeof stateMachineWith>;
let definition: AslDefinition;

beforeAll(() => {
  synthesized = synth(BREACH_SETTINGS);
  machine = stateMachineWith(synthesized, 'Recon');
  definition = machine.definition;
});

describe('BreachReport state machine', () => {
  it('runs Recon, then archives and writes the manifest on success, and succeeds at once on no_results', () => {
    expect(definition.StartAt).toBe('Recon');
    expect(stateNamed(definition, 'Recon').Next).toBe('BreachesFound?');
    expect(stateNamed(definition, 'BreachesFound?')).toEqual({
      Type: 'Choice',
      Choices: [
        // A throttled request: no answer yet, the wait first (recon-throttle.test.ts).
        { Variable: '$.reconThrottle', IsPresent: true, Next: 'WaitForReconSlot' },
        { Variable: '$.recon.status', StringEquals: 'success', Next: 'ArchiveReport' },
        { Variable: '$.recon.status', StringEquals: 'no_results', Next: 'NoBreachesFound' },
      ],
      Default: 'MarkReconFailed',
    });
    expect(stateNamed(definition, 'ArchiveReport').Next).toBe('WriteBreachManifest');
    expect(stateNamed(definition, 'WriteBreachManifest').Next).toBe('ReportArchived');
    expect(stateNamed(definition, 'NoBreachesFound').Type).toBe('Succeed');
    expect(stateNamed(definition, 'ReportArchived').Type).toBe('Succeed');
  });

  it('labels every failure, records it, and ends in a Fail state carrying the record', () => {
    for (const [task, mark] of [
      ['Recon', 'MarkReconFailed'],
      ['ArchiveReport', 'MarkArchiveFailed'],
      ['WriteBreachManifest', 'MarkManifestFailed'],
    ] as const) {
      expect(stateNamed(definition, task).Catch).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: mark },
      ]);
      expect(stateNamed(definition, mark)).toMatchObject({
        Type: 'Pass',
        ResultPath: '$.failure',
        Next: 'RecordBreachFailure',
      });
    }
    expect(stateNamed(definition, 'RecordBreachFailure').Next).toBe('BreachReportFailed');
    // A recorder that fails itself still ends the run as the person's own failure.
    expect(stateNamed(definition, 'RecordBreachFailure').Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.notRecorded', Next: 'BreachFailureNotRecorded' },
    ]);
    expect(stateNamed(definition, 'BreachFailureNotRecorded').Next).toBe('BreachReportFailed');
    expect(stateNamed(definition, 'BreachReportFailed')).toEqual({
      Type: 'Fail',
      ErrorPath: '$.failure.error',
      CausePath: '$.failure.cause',
    });
  });

  it('retries Recon only on errors that prove no report was made', () => {
    // A 401 proves it too: the vendor refused the request (its own rule, tested below). A vendor 429
    // proves it as well, but is waited out in WaitForReconSlot (recon-throttle.test.ts), never sooner
    // than its Retry-After, which a Retry cannot read.
    expect(retriedErrors(stateNamed(definition, 'Recon')).sort()).toEqual(
      ['Lambda.TooManyRequestsException', 'VendorAuthError'].sort(),
    );
    for (const ambiguous of [
      'VendorNetworkError',
      'VendorTimeoutError',
      'VendorUnavailableError',
      'Lambda.ServiceException',
    ]) {
      expect(retriedErrors(stateNamed(definition, 'Recon'))).not.toContain(ambiguous);
    }
  });

  it('retries the idempotent steps with full jitter, never a permanent error', () => {
    for (const task of ['ArchiveReport', 'WriteBreachManifest', 'RecordBreachFailure']) {
      const [rule] = retriesOf(stateNamed(definition, task));
      expect(rule).toMatchObject({ JitterStrategy: 'FULL', MaxAttempts: 5 });
      expect(rule?.ErrorEquals).toEqual(
        expect.arrayContaining(['VendorNetworkError', 'Lambda.ServiceException']),
      );
      for (const permanent of ['InvalidInputError', 'ArchiveVerificationError', 'ReconOutcomeUnknownError']) {
        expect(rule?.ErrorEquals).not.toContain(permanent);
      }
    }
  });

  it('retries a vendor 401 in Recon and ArchiveReport only, in its own rule without jitter', () => {
    for (const [name, state] of allStates(definition)) {
      const rules = retriesOf(state).filter((rule) => rule.ErrorEquals.includes('VendorAuthError'));
      if (name === 'Recon' || name === 'ArchiveReport') {
        expect(rules, name).toEqual([
          expect.objectContaining({
            ErrorEquals: ['VendorAuthError'],
            MaxAttempts: 3,
            JitterStrategy: 'NONE',
          }),
        ]);
      } else {
        expect(rules, name).toEqual([]);
      }
    }
  });

  it('is a Standard machine with a timeout, tracing, and logs without execution data', () => {
    expect(machine.properties).toMatchObject({
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { IncludeExecutionData: false, Level: 'ALL' },
    });
    // Two hours of work, plus the budget of waits after throttled recon requests.
    expect(definition.TimeoutSeconds).toBe(7200 + DEFAULT_THROTTLE_WAIT.maxTotalWaitSeconds);
    expect(allStates(definition).size).toBe(13);
  });
});

describe('BreachReport functions', () => {
  it('gives the vendor URL and the key secret to Recon and ArchiveReport only', () => {
    for (const file of ['breach-recon', 'archive-breach-report']) {
      const fn = functionFor(synthesized, file);
      expect(fn.environment.BREACH_API_URL).toBe('https://breach.vendor.example.net');
      expect(fn.environment.VENDOR_API_KEY_SECRET_ARN).toBeDefined();
      expect(actionsAllowed(grantsOf(synthesized, fn.roleLogicalId))).toContain(
        'secretsmanager:GetSecretValue',
      );
    }
    for (const file of ['write-breach-manifest', 'record-breach-failure']) {
      const fn = functionFor(synthesized, file);
      expect(fn.environment.BREACH_API_URL).toBeUndefined();
      expect(fn.environment.VENDOR_API_KEY_SECRET_ARN).toBeUndefined();
      expect(actionsAllowed(grantsOf(synthesized, fn.roleLogicalId))).not.toContain(
        'secretsmanager:GetSecretValue',
      );
    }
    expect(functionFor(synthesized, 'breach-recon').environment.BREACH_MAX_EMAILS).toBe('20');
  });

  it('scopes every object grant to breach/ of the results bucket', () => {
    for (const file of [
      'breach-recon',
      'archive-breach-report',
      'write-breach-manifest',
      'record-breach-failure',
    ]) {
      const grants = grantsOf(synthesized, functionFor(synthesized, file).roleLogicalId);
      const objectResources = ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'].flatMap((action) =>
        resourcesAllowed(grants, action),
      );
      expect(objectResources.length, file).toBeGreaterThan(0);
      for (const resource of objectResources) expect(resource, file).toMatch(/\/breach\/\*$/);
    }
  });

  it('lets only ArchiveReport delete staged objects and read versions, and only Recon delete its claim', () => {
    const actionsOf = (file: string) =>
      actionsAllowed(grantsOf(synthesized, functionFor(synthesized, file).roleLogicalId));
    expect(actionsOf('archive-breach-report')).toEqual(
      expect.arrayContaining(['s3:GetObjectVersion', 's3:DeleteObject', 's3:AbortMultipartUpload']),
    );
    expect(actionsOf('breach-recon')).toContain('s3:DeleteObject');
    expect(actionsOf('write-breach-manifest')).not.toContain('s3:DeleteObject');
    expect(actionsOf('record-breach-failure').filter((a) => a.startsWith('s3:'))).toEqual(['s3:PutObject']);
  });

  it('gives the archive step Lambda’s longest timeout and room to stream', () => {
    synthesized.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('lambdas/breach/archive-breach-report\\.ts$'),
      Timeout: 900,
      MemorySize: 1024,
    });
  });

  it('outputs the machine ARN', () => {
    synthesized.template.hasOutput('BreachStateMachineArn', { Value: { Ref: machine.logicalId } });
  });
});
