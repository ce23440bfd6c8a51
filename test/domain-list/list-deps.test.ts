import { describe, expect, it } from 'vitest';
import { intakeDepsFromEnvironment, listDepsFromEnvironment } from '#lambdas/domain-list/deps';
import { ConfigurationError } from '#lambdas/platform/errors';

describe('list handler environment', () => {
  it('reads the intake suffixes the EventBridge rule was built with', () => {
    const deps = listDepsFromEnvironment({ RESULTS_BUCKET: 'results', INTAKE_SUFFIXES: '.txt,.LST' });
    expect(deps.settings.suffixes).toEqual(['.txt', '.lst']);
  });

  it('accepts every suffix the configuration accepts, multi-part ones included', () => {
    const deps = listDepsFromEnvironment({ RESULTS_BUCKET: 'results', INTAKE_SUFFIXES: '.domains.txt,.csv' });
    expect(deps.settings.suffixes).toEqual(['.domains.txt', '.csv']);
  });

  it('names INTAKE_SUFFIXES when it is malformed', () => {
    expect(() => listDepsFromEnvironment({ RESULTS_BUCKET: 'results', INTAKE_SUFFIXES: 'txt;csv' })).toThrow(
      ConfigurationError,
    );
    expect(() => listDepsFromEnvironment({ RESULTS_BUCKET: 'results', INTAKE_SUFFIXES: 'txt;csv' })).toThrow(
      /INTAKE_SUFFIXES/,
    );
  });

  it('names the missing variable at cold start', () => {
    expect(() => listDepsFromEnvironment({})).toThrow(/RESULTS_BUCKET/);
    expect(() => intakeDepsFromEnvironment({})).toThrow(/DOMAIN_LIST_STATE_MACHINE_ARN/);
  });

  it('defaults the intake prefix and suffixes', () => {
    const deps = intakeDepsFromEnvironment({
      DOMAIN_LIST_STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:1:stateMachine:x',
    });
    expect(deps.settings.prefix).toBe('incoming/');
    expect(deps.settings.suffixes).toEqual(['.txt', '.csv']);
    // and its logs name a domain list, never another workflow's run
    expect(deps.runKind).toBe('domain list');
  });
});
