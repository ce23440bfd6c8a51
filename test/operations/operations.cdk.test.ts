/** The alarms on the pipeline's own metrics, and the dashboard. */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { METRIC } from '#lambdas/platform/metrics';
import { BREACH_METRIC, ROTATION_METRIC, SCAN_METRIC } from '#lambdas/registry';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { type Synthesized, synth } from '../kit/synth.ts';

const SCHEDULED = { schedules: [{ name: 'hourly', expression: 'rate(1 hour)', domains: ['example.com'] }] };
let scheduled: Synthesized;
let plain: Synthesized;
beforeAll(() => {
  scheduled = synth(SCHEDULED);
  plain = synth();
});

const alarmsDescribed = (s: Synthesized, anchor: string) =>
  Object.values(s.json.Resources).filter(
    (r) =>
      r.Type === 'AWS::CloudWatch::Alarm' && String(r.Properties?.AlarmDescription).endsWith(`#${anchor}`),
  );

describe('alarms on the pipeline metrics', () => {
  it('alarms when more than the configured share of the started scans fail or time out', () => {
    const [alarm] = alarmsDescribed(plain, 'scanfailurerate');
    const metrics = alarm?.Properties?.Metrics as {
      Id: string;
      Expression?: string;
      MetricStat?: { Metric: { MetricName: string; Dimensions: { Name: string; Value: string }[] } };
    }[];
    expect(alarm?.Properties).toMatchObject({ Threshold: 0.25, ComparisonOperator: 'GreaterThanThreshold' });
    const expression = metrics.find((m) => m.Expression !== undefined)?.Expression ?? '';
    expect(expression).toMatch(/^IF\(FILL\(s, 0\) >= 5, \(.+\) \/ s, 0\)$/);
    const names = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
    expect(names.filter((n) => n === SCAN_METRIC.scansFailed)).toHaveLength(6);
    expect(names).toEqual(expect.arrayContaining([SCAN_METRIC.scansTimedOut, SCAN_METRIC.scansStarted]));
    const custom = synth({ alarms: { scanFailureRate: 0.5, minScansForRate: 20 } });
    const [tuned] = alarmsDescribed(custom, 'scanfailurerate');
    expect(tuned?.Properties?.Threshold).toBe(0.5);
    expect(JSON.stringify(tuned?.Properties?.Metrics)).toContain('>= 20');
  });

  it('judges a quiet window only by what happened in it, so a fresh stack with no data stays OK', () => {
    for (const anchor of ['nosuccessfulscan', 'nothingstored', 'noscanstarted']) {
      expect(alarmsDescribed(plain, anchor), anchor).toHaveLength(0);
    }
    const expressionOf = (anchor: string) => {
      const [alarm] = alarmsDescribed(scheduled, anchor);
      // No data (nothing ran yet) is not breaching; one period spans the whole window.
      expect(alarm?.Properties, anchor).toMatchObject({
        EvaluationPeriods: 1,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      const metrics = alarm?.Properties?.Metrics as {
        Expression?: string;
        MetricStat?: { Period: number };
      }[];
      for (const m of metrics.filter((q) => q.MetricStat))
        expect(m.MetricStat?.Period, anchor).toBe(2 * 86_400);
      return metrics.find((m) => m.Expression !== undefined)?.Expression ?? '';
    };
    // Failed or timed-out scans count only when none succeeded; stored bytes clear NothingStored.
    expect(expressionOf('nosuccessfulscan')).toMatch(
      /^IF\(FILL\(s, 0\) > 0, 0, (FILL\(f\d, 0\) \+ ){6}FILL\(t, 0\)\)$/,
    );
    expect(expressionOf('nothingstored')).toBe('IF(FILL(r, 0) + FILL(l, 0) + FILL(d, 0) > 0, 0, FILL(s, 0))');
    const wide = synth({ ...SCHEDULED, alarms: { quietDays: 7 } });
    const [weekly] = alarmsDescribed(wide, 'nosuccessfulscan');
    expect(JSON.stringify(weekly?.Properties?.Metrics)).toContain(`"Period":${7 * 86_400}`);
    const disabled = synth({ schedules: [{ ...SCHEDULED.schedules[0], enabled: false }] } as never);
    expect(alarmsDescribed(disabled, 'nosuccessfulscan')).toHaveLength(0);
  });

  it('notices scans stopping once they had started, by INSUFFICIENT_DATA rather than on a fresh stack', () => {
    const [alarm] = alarmsDescribed(scheduled, 'noscanstarted');
    expect(alarm?.Properties).toMatchObject({
      MetricName: SCAN_METRIC.scansStarted,
      Statistic: 'Sum',
      Period: 2 * 86_400,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'missing',
    });
    expect(alarm?.Properties?.InsufficientDataActions).toEqual(alarm?.Properties?.AlarmActions);
    expect(alarm?.Properties?.InsufficientDataActions).toHaveLength(1);
  });

  it('alarms on vendor 401s and on sustained throttling across every operation', () => {
    const [auth] = alarmsDescribed(plain, 'vendorauthfailures');
    const [throttled] = alarmsDescribed(plain, 'vendorthrottlingsustained');
    expect(JSON.stringify(auth?.Properties?.Metrics)).toContain(
      `SELECT SUM(${METRIC.vendorErrors}) FROM SCHEMA(\\"SecurityPipeline\\", operation, outcome, service) WHERE outcome = 'auth'`,
    );
    expect(throttled?.Properties).toMatchObject({
      Threshold: 20,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
    expect(JSON.stringify(throttled?.Properties?.Metrics)).toContain("WHERE outcome = 'throttled'");
  });

  it('refuses thresholds CloudWatch cannot evaluate, naming the setting', () => {
    expect(() => parsePipelineConfig({ alarms: { quietDays: 8 } }, 'test')).toThrow(
      /pipeline\.alarms\.quietDays must be between 1 and 7/,
    );
    expect(() => parsePipelineConfig({ alarms: { scanFailureRate: 2 } }, 'test')).toThrow(
      /pipeline\.alarms\.scanFailureRate/,
    );
  });
});

describe('the dashboard', () => {
  it("shows scans, durations, vendor calls, bytes, breach results, key age, the vendor's counts, DLQ depth and every alarm", () => {
    scheduled.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const body = JSON.stringify(
      Object.values(scheduled.json.Resources).find((r) => r.Type === 'AWS::CloudWatch::Dashboard')?.Properties
        ?.DashboardBody,
    );
    for (const metric of [
      SCAN_METRIC.scansStarted,
      SCAN_METRIC.scansSucceeded,
      SCAN_METRIC.scansFailed,
      SCAN_METRIC.scansTimedOut,
      SCAN_METRIC.scanDuration,
      METRIC.vendorRetries,
      METRIC.vendorErrors,
      METRIC.bytesStored,
      BREACH_METRIC.breachReports,
      BREACH_METRIC.breachArchived,
      ROTATION_METRIC.apiKeyAge,
      SCAN_METRIC.vendorFinishedIncrease,
      SCAN_METRIC.vendorFailedIncrease,
      SCAN_METRIC.scansReconciled,
      SCAN_METRIC.startsSettled,
      SCAN_METRIC.startsThrottled,
    ]) {
      expect(body, metric).toContain(metric);
    }
    expect(body).toContain('p95');
    const queues = Object.values(scheduled.json.Resources).filter((r) => r.Type === 'AWS::SQS::Queue').length;
    expect(body.match(/ApproximateNumberOfMessagesVisible/g)?.length).toBe(queues);
    const alarms = Object.keys(scheduled.json.Resources).filter(
      (id) => scheduled.json.Resources[id]?.Type === 'AWS::CloudWatch::Alarm',
    );
    for (const id of alarms) expect(body, id).toContain(id);
    scheduled.template.hasOutput('DashboardName', { Value: { Ref: Match.stringLikeRegexp('^Dashboard') } });
  });
});
