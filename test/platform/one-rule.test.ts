/**
 * One rule, one place: a poll setting out of its bounds is refused with the same words at synth
 * (the configuration) and at a handler's cold start (its environment variable).
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '#lambdas/platform/errors';
import { POLL_BOUNDS, POLL_VARIABLES, type PollSettings } from '#lambdas/scan/poll-schedule';
import { scanSettingsFromEnv } from '#lambdas/scan/settings';
import { PipelineConfigError } from '../../lib/config/errors.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { thrownBy } from '../kit/errors.ts';

const outOfRange: [keyof PollSettings, number][] = (
  Object.keys(POLL_BOUNDS) as (keyof PollSettings)[]
).flatMap((field) => [
  [field, POLL_BOUNDS[field].min - 1] as [keyof PollSettings, number],
  [field, POLL_BOUNDS[field].max + 1] as [keyof PollSettings, number],
]);

describe('poll bounds', () => {
  it.each(outOfRange)('refuses %s = %d identically at synth and at cold start', (field, value) => {
    // Act
    const atSynth = thrownBy(PipelineConfigError, () =>
      parsePipelineConfig({ poll: { [field]: value } }, 'test'),
    );
    const atColdStart = thrownBy(ConfigurationError, () =>
      scanSettingsFromEnv({ RESULTS_BUCKET: 'results-bucket', [POLL_VARIABLES[field]]: String(value) }),
    );

    // Assess
    const synthIssue = atSynth.issues.find((issue) => issue.setting === `pipeline.poll.${field}`);
    expect(synthIssue?.problem).toMatch(/^must be between /);
    expect(atColdStart.setting).toBe(POLL_VARIABLES[field]);
    expect(atColdStart.message).toBe(`Configuration ${POLL_VARIABLES[field]}: ${synthIssue?.problem}`);
  });

  it('refuses a history-budget overrun at synth and at cold start, naming the largest deadline that fits', () => {
    // Prepare: one-second waits for a week cannot fit 12,500 events
    const poll = { minWaitSeconds: 1, maxWaitSeconds: 1, growthFactor: 1, deadlineSeconds: 604_800 };

    // Act
    const atSynth = thrownBy(PipelineConfigError, () => parsePipelineConfig({ poll }, 'test'));
    const atColdStart = thrownBy(ConfigurationError, () =>
      scanSettingsFromEnv({
        RESULTS_BUCKET: 'results-bucket',
        POLL_MIN_WAIT_SECONDS: '1',
        POLL_MAX_WAIT_SECONDS: '1',
        POLL_GROWTH_FACTOR: '1',
        SCAN_DEADLINE_SECONDS: '604800',
      }),
    );

    // Assess: both name the deadline as what to lower, and how far
    expect(atSynth.message).toMatch(/lower pipeline\.poll\.deadlineSeconds \(604800\) to at most \d+/);
    expect(atColdStart.setting).toBe('SCAN_DEADLINE_SECONDS');
    expect(atColdStart.message).toMatch(/lower SCAN_DEADLINE_SECONDS \(604800\) to at most \d+/);
    const largest = Number(/to at most (\d+)/.exec(atSynth.message)?.[1]);
    expect(() => parsePipelineConfig({ poll: { ...poll, deadlineSeconds: largest } }, 'test')).not.toThrow();
    expect(() => parsePipelineConfig({ poll: { ...poll, deadlineSeconds: largest + 1 } }, 'test')).toThrow(
      PipelineConfigError,
    );
  });
});
