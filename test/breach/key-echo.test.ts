/**
 * Issue 32, items 7 and 8: a recon answer that echoes `x-api-key`, and a report name that holds the
 * key, run through the synthesized BreachReport definition and breach reconciliation. The key is a
 * plain word, so only the redaction of the key in use can hide it; the leak watch
 * (test/kit/leak-watch.ts) searches every payload, object and S3 key as well.
 */
import { describe, expect, it } from 'vitest';
import { archiveReport } from '#lambdas/breach/archive-breach-report';
import { reconcileReports } from '#lambdas/breach/reconcile-breach-reports';
import { ReportNameRefusedError } from '#lambdas/platform/errors';
import { REDACTED } from '#lambdas/platform/redaction/redact';
import { describeResult } from '#local/cli/breach-command';
import { runBreachReport } from '#local/runner/breach-run';
import { listKeys, readJson } from '../kit/s3.ts';
import { bed, everythingStored, RESULTS_BUCKET, runOptions, useBreachRun } from './fixture.ts';

const WORD_KEY = 'MarzipanWindmillCanyon';
/** The key as a slug would lower-case it, as well as itself. */
const KEY = new RegExp(WORD_KEY, 'i');

useBreachRun({ simulator: { apiKey: WORD_KEY } });

const PERSON = { name: 'Jane Doe', emails: ['jane@example.com'] };

function echo(into: 'body' | 'report-name'): void {
  bed.sim.addFault({
    api: 'breach',
    method: 'POST',
    path: '/recon',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'key-echo', into },
  });
}

/** One person's run through the definition, with every state payload it passed. */
async function runCollecting(requestId: string) {
  const payloads: unknown[] = [];
  const run = await runBreachReport(
    runOptions({ onStatePayload: (_state, payload) => payloads.push(payload) }),
    { ...PERSON, requestId },
  );
  return { run, payloads };
}

describe('a recon answer that echoes the key', () => {
  it('is archived, and recon.json keeps the answer with x-api-key and the bare key redacted', async () => {
    echo('body');

    const { run, payloads } = await runCollecting('e1');

    expect(run.outcome).toBe('archived');
    const recon = await readJson(bed.s3.client, RESULTS_BUCKET, `${run.outputPrefix}recon.json`);
    expect(recon.raw).toMatchObject({ 'x-api-key': REDACTED, note: `served for ${REDACTED}` });
    const everything = [await everythingStored(bed), JSON.stringify(payloads), JSON.stringify(run)];
    expect(everything.join('\n')).not.toMatch(KEY);
  });
});

describe('a report name that holds the key', () => {
  it('is refused by its fingerprint: recorded once, never downloaded, printed or made an S3 key', async () => {
    echo('report-name');

    const { run, payloads } = await runCollecting('n1');

    expect(run).toMatchObject({ outcome: 'failed', error: 'ReconFailed' });
    expect(describeResult(run, '/out')).toMatch(/ReportNameRefusedError: .*\(name sha256:[0-9a-f]{16}\)/);
    const recon = await readJson(bed.s3.client, RESULTS_BUCKET, `${run.outputPrefix}recon.json`);
    expect(recon).toMatchObject({
      status: 'success',
      reportNameKey: null,
      reportNameRefused: expect.stringMatching(/^sha256:[0-9a-f]{16}$/),
    });
    const keys = await listKeys(bed.s3.client, RESULTS_BUCKET);
    expect(keys.filter((key) => key.startsWith('breach/reports/'))).toEqual([]);
    expect(keys.some((key) => key.endsWith('.report-name.json'))).toBe(false);
    expect(bed.sim.requestCount('GET /download/{report_name}')).toBe(0);
    const everything = [
      await everythingStored(bed),
      JSON.stringify(payloads),
      JSON.stringify(run),
      describeResult(run, '/out'),
    ];
    expect(everything.join('\n')).not.toMatch(KEY);
  });

  it('is refused by reconciliation too: listed as unreadable by its fingerprint, nothing archived', async () => {
    echo('report-name');
    const run = await runBreachReport(runOptions(), { ...PERSON, requestId: 'n2' });
    expect(run.outcome).toBe('failed');

    const reconciled = await reconcileReports(bed.deps);

    expect(reconciled.counts).toMatchObject({ archived: 0, failed: 0, unreadable: 1 });
    const record = await readJson<{ unreadable: { reason: string }[] }>(
      bed.s3.client,
      RESULTS_BUCKET,
      reconciled.recordKey,
    );
    expect(record.unreadable).toEqual([
      { index: 0, reason: expect.stringMatching(/^report name sha256:[0-9a-f]{16} holds a key; refused$/) },
    ]);
    const keys = await listKeys(bed.s3.client, RESULTS_BUCKET);
    expect(keys.filter((key) => key.startsWith('breach/reports/'))).toEqual([]);
    expect([await everythingStored(bed), JSON.stringify(reconciled)].join('\n')).not.toMatch(KEY);
  });

  it('is refused by ArchiveReport and the download too, when one is handed it directly (an old payload redriven)', async () => {
    bed.sim.scriptReportName(`rpt-${WORD_KEY}-x`);
    const made = await bed.client.recon({ name: 'Kim Lee', emails: ['kim@example.com'] });
    const name = made.output ?? '';
    const s3Writes = await listKeys(bed.s3.client, RESULTS_BUCKET);

    await expect(archiveReport(bed.deps, name, { origin: 'workflow' })).rejects.toThrow(
      ReportNameRefusedError,
    );
    await expect(bed.client.download(name)).rejects.toThrow(
      /the report name holds a key; the report is refused/,
    );

    expect(await listKeys(bed.s3.client, RESULTS_BUCKET)).toEqual(s3Writes);
    expect(bed.sim.requestCount('GET /download/{report_name}')).toBe(0);
    expect(bed.logger.text()).not.toMatch(KEY);
  });
});
