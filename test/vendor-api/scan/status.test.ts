import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '#lambdas/platform/errors';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';
import {
  classifyScanStatus,
  DEFAULT_STATUS_VOCABULARY,
  parseStatusVocabulary,
} from '#lambdas/vendor-api/scan/status';
import type { ScanState } from '#lambdas/vendor-api/scan/types';

const JSON_TYPE = 'application/json';

describe('classifyScanStatus with the default vocabulary', () => {
  it.each<[string, ScanState]>([
    ['queued', 'pending'],
    ['PENDING', 'pending'],
    ['accepted', 'pending'],
    ['running', 'running'],
    ['In_Progress', 'running'],
    ['in-progress', 'running'],
    ['in progress', 'running'],
    ['scanning', 'running'],
    ['completed', 'succeeded'],
    ['Done', 'succeeded'],
    ['success', 'succeeded'],
    ['failed', 'failed'],
    ['cancelled', 'failed'],
    ['timed_out', 'failed'],
    ['rejected', 'failed'],
    ['hibernating', 'unknown'],
  ])('maps the vendor word %j to %s', (word, state) => {
    // Prepare
    const body = JSON.stringify({ uuid: 'x', status: word });

    // Act
    const status = classifyScanStatus(body, JSON_TYPE, DEFAULT_STATUS_VOCABULARY);

    // Assess
    expect(status.state).toBe(state);
    expect(status.vendorStatus).toBe(word);
  });

  it.each([
    ['status', { status: 'running' }],
    ['state', { state: 'running' }],
    ['scan_status', { scan_status: 'running' }],
    ['phase', { phase: 'running' }],
    ['a differently cased field', { Status: 'running' }],
    ['scan.status', { scan: { status: 'running' } }],
    ['data.state', { data: { state: 'running' } }],
    ['a nested status object', { status: { name: 'running', since: '2026-01-01' } }],
  ])('finds the word in %s', (_where, body) => {
    // Act
    const status = classifyScanStatus(JSON.stringify(body), JSON_TYPE);

    // Assess
    expect(status.state).toBe('running');
  });

  it('prefers the top-level field over an envelope', () => {
    // Act
    const status = classifyScanStatus(
      JSON.stringify({ status: 'completed', data: { state: 'running' } }),
      JSON_TYPE,
    );

    // Assess
    expect(status.state).toBe('succeeded');
  });

  it.each([
    ['a bare word', 'running', 'text/plain', 'running'],
    ['a bare word with a newline', 'completed\n', 'text/plain', 'succeeded'],
    ['a JSON string', '"failed"', JSON_TYPE, 'failed'],
    ['a status line in text', 'scan 42\nstatus: queued\nprogress: 0', 'text/plain', 'pending'],
    ['a key=value line', 'state=done', undefined, 'succeeded'],
  ])('reads %s from a text body', (_what, body, contentType, state) => {
    // Act
    const status = classifyScanStatus(body, contentType);

    // Assess
    expect(status.state).toBe(state);
  });

  it.each([
    ['an empty body', ''],
    ['an object without a status field', '{"uuid":"abc"}'],
    ['malformed JSON', '{"status": "runn'],
    ['an array', '["running"]'],
    ['a paragraph of text', 'The scan\nis going\nfine, thanks.'],
  ])('says unknown for %s and keeps the raw body', (_what, body) => {
    // Act
    const status = classifyScanStatus(body, JSON_TYPE);

    // Assess
    expect(status.state).toBe('unknown');
    expect(status.raw).toBe(body);
    expect(status.contentType).toBe(JSON_TYPE);
  });
});

describe('classifyScanStatus progress', () => {
  it.each([
    ['an integer percentage', { status: 'running', progress: 42 }, 42],
    ['a fraction of 1', { status: 'running', progress: 0.25 }, 25],
    ['a percent field', { status: 'running', percent: 80 }, 80],
    ['a percentage field with a % string', { status: 'running', percentage: '55%' }, 55],
    ['a progress_percent numeric string', { status: 'running', progress_percent: '12.5' }, 12.5],
    ['progress under data', { data: { status: 'running', progress: 7 } }, 7],
    ['a value above 100 (clamped)', { status: 'running', progress: 250 }, 100],
    ['a negative value (clamped)', { status: 'running', progress: -5 }, 0],
    ['a 1 (read as 1 %, never as done)', { status: 'running', progress: 1 }, 1],
  ])('reads %s', (_what, body, expected) => {
    // Act
    const status = classifyScanStatus(JSON.stringify(body), JSON_TYPE);

    // Assess
    expect(status.progress).toBe(expected);
  });

  it('leaves progress undefined when there is none or it is not a number', () => {
    // Act
    const none = classifyScanStatus('{"status":"running"}', JSON_TYPE);
    const text = classifyScanStatus('{"status":"running","progress":"about half"}', JSON_TYPE);

    // Assess
    expect(none.progress).toBeUndefined();
    expect(text.progress).toBeUndefined();
  });
});

describe('classifyScanStatus raw body', () => {
  it('keeps the raw body byte-for-byte', () => {
    // Prepare
    const body = '{ "status" : "running",  "note": "ünïcode ✓" }';

    // Act
    const status = classifyScanStatus(body, JSON_TYPE);

    // Assess
    expect(status.raw).toBe(body);
  });

  it('bounds the raw body to 64 KiB without splitting a character', () => {
    // Prepare
    const body = JSON.stringify({ status: 'running', pad: '€'.repeat(40_000) });

    // Act
    const status = classifyScanStatus(body, JSON_TYPE);

    // Assess
    expect(status.state).toBe('running');
    expect(Buffer.byteLength(status.raw, 'utf8')).toBeLessThanOrEqual(64 * 1024);
    expect(status.raw).not.toContain('\uFFFD');
    expect(body.startsWith(status.raw)).toBe(true);
  });
});

describe('custom vocabularies', () => {
  it('uses the words of a custom vocabulary and keeps defaults for categories it leaves out', () => {
    // Prepare
    const vocabulary = parseStatusVocabulary(
      '{"succeeded": ["ok", "green"], "failed": ["red"]}',
      SCAN_VARIABLES.statusVocabulary,
    );

    // Act
    const states = ['ok', 'GREEN', 'red', 'completed', 'running', 'queued'].map(
      (word) => classifyScanStatus(JSON.stringify({ status: word }), JSON_TYPE, vocabulary).state,
    );

    // Assess: "completed" is no longer a success word, the others keep their defaults.
    expect(states).toEqual(['succeeded', 'succeeded', 'failed', 'unknown', 'running', 'pending']);
  });

  it.each([
    ['malformed JSON', '{"pending": [', /not valid JSON/],
    ['an array', '["queued"]', /must be a JSON object/],
    ['an unknown category', '{"finished": ["done"]}', /unknown key "finished"/],
    ['a category that is not an array', '{"pending": "queued"}', /"pending" must be an array/],
    ['an empty word', '{"running": ["go", " "]}', /"running"\[1\] must be a non-empty string/],
    ['a word in two categories', '{"running": ["done"]}', /"done" is listed under both/],
  ])('rejects %s with a ConfigurationError that names the setting', (_what, json, message) => {
    // Act
    const act = () => parseStatusVocabulary(json, SCAN_VARIABLES.statusVocabulary);

    // Assess
    expect(act).toThrow(ConfigurationError);
    expect(act).toThrow(/STATUS_VOCABULARY/);
    expect(act).toThrow(message);
  });
});
