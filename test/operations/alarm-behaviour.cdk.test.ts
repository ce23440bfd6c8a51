/**
 * What the quiet-period and key-age alarms do, judged by a model of CloudWatch's evaluation
 * (alarm-model.ts) over the synthesized alarms: quiet on a fresh stack, quiet on a healthy one, and
 * still telling when schedules run and nothing succeeds, or when reports stop after they started.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Synthesized, synth } from '../kit/synth.ts';
import { type AlarmProperties, type AlarmState, type Datapoints, judge } from './alarm-model.ts';

let scheduled: Synthesized;
beforeAll(() => {
  scheduled = synth({
    schedules: [{ name: 'hourly', expression: 'rate(1 hour)', domains: ['example.com'] }],
  });
});

/** The alarm whose description links `anchor`, with whether it notifies on INSUFFICIENT_DATA. */
function alarm(anchor: string): AlarmProperties & { notifiesOnSilence: boolean } {
  const found = Object.values(scheduled.json.Resources).find(
    (r) =>
      r.Type === 'AWS::CloudWatch::Alarm' && String(r.Properties?.AlarmDescription).endsWith(`#${anchor}`),
  );
  if (!found?.Properties) throw new Error(`no alarm links #${anchor}`);
  const properties = found.Properties as unknown as AlarmProperties & { InsufficientDataActions?: unknown[] };
  return { ...properties, notifiesOnSilence: (properties.InsufficientDataActions ?? []).length > 0 };
}

const QUIET = ['nosuccessfulscan', 'nothingstored', 'keynotrotated'];
const SILENCE = ['noscanstarted', 'keyagenotmeasured'];

/** A window of a healthy stack: scans started and succeeded, output stored, the key age measured. */
const HEALTHY: Datapoints = {
  ScansStarted: 4,
  ScansSucceeded: 4,
  'BytesStored/report': 2048,
  'BytesStored/logs': 512,
  ApiKeyAgeDays: 12,
};

describe('on a fresh stack (no datapoint at all)', () => {
  it('leaves every judging alarm OK', () => {
    for (const anchor of QUIET) expect(judge(alarm(anchor), {}), anchor).toBe('OK');
  });

  it('leaves the silence alarms in INSUFFICIENT_DATA, the state they were created in: no change, no notification', () => {
    for (const anchor of SILENCE)
      expect(judge(alarm(anchor), {}, 'INSUFFICIENT_DATA'), anchor).toBe('INSUFFICIENT_DATA');
  });
});

describe('on a healthy stack', () => {
  it('keeps every alarm OK', () => {
    for (const anchor of [...QUIET, ...SILENCE]) expect(judge(alarm(anchor), HEALTHY), anchor).toBe('OK');
  });
});

describe('when something is wrong', () => {
  it('alarms when scans ran and every one failed or timed out', () => {
    const failing = { ScansStarted: 5, 'ScansFailed/ScanRejected': 3, 'ScansTimedOut/ScanTimedOut': 2 };
    expect(judge(alarm('nosuccessfulscan'), failing)).toBe('ALARM');
    // One success in the window clears it.
    expect(judge(alarm('nosuccessfulscan'), { ...failing, ScansSucceeded: 1 })).toBe('OK');
  });

  it('alarms when scans succeeded and stored nothing', () => {
    expect(judge(alarm('nothingstored'), { ScansStarted: 2, ScansSucceeded: 2 })).toBe('ALARM');
  });

  it('alarms on a key older than the limit', () => {
    expect(judge(alarm('keynotrotated'), { ApiKeyAgeDays: 40 })).toBe('ALARM');
  });

  it('notifies when reports stop after they started: OK -> INSUFFICIENT_DATA', () => {
    for (const anchor of SILENCE) {
      const silence = alarm(anchor);
      const after: AlarmState = judge(silence, {}, 'OK');
      expect(after, anchor).toBe('INSUFFICIENT_DATA');
      expect(silence.notifiesOnSilence, anchor).toBe(true);
    }
  });
});
