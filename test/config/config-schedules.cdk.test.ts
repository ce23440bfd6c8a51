/** The pipeline configuration: schedules, the Scheduler expression grammar, and loading from cdk context. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipelineConfig } from '../../lib/config/load.ts';
import { scheduleExpressionProblem } from '../../lib/config/schedule-expression.ts';
import { list, problemsOf } from './config-problems.ts';

describe('parsePipelineConfig: schedules', () => {
  const schedule = (extra: Record<string, unknown>) => ({
    domainLists: list,
    schedules: [{ name: 'nightly', expression: 'cron(0 2 * * ? *)', domainList: 'main', ...extra }],
  });

  it('rejects a cron without exactly one "?" in day-of-month/day-of-week, naming the schedule', () => {
    expect(problemsOf(schedule({ expression: 'cron(0 2 * * * *)' }))).toContain(
      "schedule 'nightly' expression cron needs '?' in exactly one of day-of-month and day-of-week",
    );
  });

  it('rejects a cron with five fields or an out-of-range minute', () => {
    expect(problemsOf(schedule({ expression: 'cron(0 2 * * ?)' }))).toContain(
      "schedule 'nightly' expression cron needs 6 fields",
    );
    expect(problemsOf(schedule({ expression: 'cron(60 2 * * ? *)' }))).toContain(
      "schedule 'nightly' expression cron minutes field '60' has '60' outside 0-59",
    );
  });

  it('rejects a rate whose unit does not agree with its value', () => {
    expect(problemsOf(schedule({ expression: 'rate(1 hours)' }))).toContain(
      "rate of 1 needs the singular unit 'hour'",
    );
    expect(problemsOf(schedule({ expression: 'rate(5 minute)' }))).toContain(
      "rate of 5 needs the plural unit 'minutes'",
    );
  });

  it('rejects a schedule that refers to an unknown domain list', () => {
    expect(problemsOf(schedule({ domainList: 'x' }))).toContain(
      "schedule 'nightly' refers to unknown domain list 'x'",
    );
  });

  it('rejects a time zone that is not an IANA name', () => {
    expect(problemsOf(schedule({ timeZone: 'Mars/Olympus' }))).toContain(
      "schedule 'nightly' timeZone is not an IANA time zone",
    );
  });

  it('rejects two schedules with the same name', () => {
    const message = problemsOf({
      schedules: [
        { name: 'nightly', expression: 'rate(1 day)', domains: ['a.test'] },
        { name: 'nightly', expression: 'rate(2 days)', domains: ['b.test'] },
      ],
    });
    expect(message).toContain("schedule 'nightly' is defined more than once");
  });

  it('rejects a schedule with both or neither of domainList and domains', () => {
    expect(problemsOf(schedule({ domains: ['a.test'] }))).toContain(
      "schedule 'nightly' must set exactly one of domainList and domains",
    );
  });

  it('rejects settings outside what EventBridge Scheduler accepts', () => {
    const message = problemsOf(
      schedule({ flexibleWindowMinutes: 1441, maxRetryAttempts: 186, maxEventAgeSeconds: 30 }),
    );
    expect(message).toContain("schedule 'nightly' flexibleWindowMinutes must be between 0 and 1440");
    expect(message).toContain("schedule 'nightly' maxRetryAttempts must be between 0 and 185");
    expect(message).toContain("schedule 'nightly' maxEventAgeSeconds must be between 60 and 86400");
  });

  it('rejects an inline list too large for the schedule target input', () => {
    const domains = Array.from({ length: 600 }, (_, i) => `host-${i}.example.com`);
    expect(problemsOf({ schedules: [{ name: 'big', expression: 'rate(1 day)', domains }] })).toContain(
      "schedule 'big' domains make a",
    );
  });

  it('reports every problem of a configuration at once', () => {
    const message = problemsOf({
      poll: { minWaitSeconds: 15, maxWaitSeconds: 10 },
      schedules: [{ name: 'nightly', expression: 'cron(bad)', domainList: 'x', timeZone: 'Nowhere' }],
    });
    expect(message.split('\n').filter((line) => line.startsWith('  - '))).toHaveLength(4);
    expect(message).toMatch(/^Invalid pipeline configuration \(test\.json\):/);
  });
});

describe('parsePipelineConfig: rotation schedules', () => {
  it.each([
    ['rate(2 hours)', 'must rotate every 4 to 23 hours'],
    ['rate(0 days)', 'must rotate every 1 to 999 days'],
    ['rate(1 week)', 'rate('],
  ])('reports only what is wrong with %s, not the rule for cron schedules', (schedule, problem) => {
    const message = problemsOf({ rotation: { schedule } });
    const problems = message.split('\n').filter((line) => line.startsWith('  - '));

    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('pipeline.rotation.schedule');
    expect(problems[0]).toContain(problem);
    expect(message).not.toContain('maxKeyAgeDays');
  });
});

describe('scheduleExpressionProblem', () => {
  it.each([
    'cron(0 2 * * ? *)',
    'cron(0/15 * * * ? *)',
    'cron(0 8 ? * MON-FRI *)',
    'cron(30 6 ? * 2#1 2027)',
    'cron(0 12 L * ? *)',
    'cron(0 12 15W * ? *)',
    'cron(0 10 ? * 6L *)',
    'cron(0 0 1 JAN,JUL ? *)',
    'rate(1 minute)',
    'rate(12 hours)',
    'at(2027-01-31T23:30:00)',
  ])('accepts %s', (expression) => {
    expect(scheduleExpressionProblem(expression)).toBeUndefined();
  });

  it.each([
    ['cron(0 2 ? * ? *)', "'?' in exactly one"],
    ['cron(0 24 * * ? *)', 'hours field'],
    ['cron(0 2 * 13 ? *)', 'month field'],
    ['cron(0 2 ? * 8 *)', 'day-of-week field'],
    ['cron(0 2 ? * 3#6 *)', "'#' with a week outside 1-5"],
    ['rate(0 minutes)', 'positive'],
    ['rate(1 week)', 'rate(<n>'],
    ['at(2027-02-30T00:00:00)', 'not a real date'],
    ['every day', "'cron(...)', 'rate(...)' or 'at(...)'"],
  ])('rejects %s', (expression, problem) => {
    expect(scheduleExpressionProblem(expression)).toContain(problem);
  });
});

describe('loadPipelineConfig', () => {
  it('parses the context value when cdk -c passes it as a JSON string', () => {
    const config = loadPipelineConfig({ pipeline: '{"scan":{"maxConcurrency":3}}' });
    expect(config.scan.maxConcurrency).toBe(3);
  });

  it('names the context key when the JSON string is invalid', () => {
    expect(() => loadPipelineConfig({ pipeline: '{scan:' })).toThrow(/pipeline is not valid JSON/);
  });

  it('refuses both context keys at once', () => {
    expect(() => loadPipelineConfig({ pipeline: {}, pipelineConfigFile: 'x.json' })).toThrow(
      /pipeline and pipelineConfigFile are both set/,
    );
  });

  it('names the file when it is missing or its settings are wrong', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'pipeline-config-'));
    try {
      writeFileSync(join(dir, 'bad.json'), JSON.stringify({ poll: { growthFactor: 0.5 } }));

      // Act + Assess
      expect(() => loadPipelineConfig({ pipelineConfigFile: 'missing.json' }, dir)).toThrow(
        /pipelineConfigFile cannot be read \(ENOENT\)/,
      );
      expect(() => loadPipelineConfig({ pipelineConfigFile: 'bad.json' }, dir)).toThrow(
        /Invalid pipeline configuration \(bad\.json\):\n {2}- pipeline\.poll\.growthFactor must be between 1 and 4/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
