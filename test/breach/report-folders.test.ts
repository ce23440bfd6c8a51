/**
 * Report folders reveal nothing of the report name without the report naming key. The audit that
 * found the old names recoverable guessed the address inside a report name from its folder alone:
 * the slug kept most of the name, and the hash was unkeyed, so each guess could be checked. That
 * attack is run here against both schemes: it recovers the address from the old folder, and
 * nothing from the keyed one. Archives stored under the old names are still found, so neither a
 * run nor reconciliation archives them twice.
 */
import { createHash } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZipFile } from 'yazl';
import { archiveReport } from '#lambdas/breach/archive-breach-report';
import { slugOf } from '#lambdas/breach/contracts';
import { legacyReportFolder, reportFolder } from '#lambdas/breach/identity';
import { reconcileReports } from '#lambdas/breach/reconcile-breach-reports';
import { redactText } from '#lambdas/platform/redaction/redact';
import { listKeys } from '../kit/s3.ts';
import { type BreachTestBed, REPORT_NAMING_KEY, RESULTS_BUCKET, startBreachBed } from './fixture.ts';

const ADDRESS = 'jane.roe@corp-example.com';
const reportNameFor = (address: string) => `Exposure report for ${address} (20261127T101500Z)`;

/** An organisation's plausible addresses: first.last at its domain, from common names. */
function candidateAddresses(): string[] {
  const first = ['jane', 'john', 'mary', 'james', 'anna', 'peter', 'lisa', 'mark', 'sara', 'paul'];
  const last = ['roe', 'doe', 'smith', 'jones', 'brown', 'lee', 'khan', 'garcia', 'miller', 'davis'];
  return first
    .flatMap((f) => last.flatMap((l) => [`${f}.${l}`, `${f[0]}${l}`, `${f}${l}`]))
    .map((local) => `${local}@corp-example.com`);
}

/** The audit's attack: for each guess, rebuild the folder name as the scheme would and compare. */
function recover(folder: string, scheme: (reportName: string) => string): string[] {
  return candidateAddresses().filter((guess) => scheme(reportNameFor(guess)) === folder);
}

describe('report folder names', () => {
  it('let the audit recover the address from an unkeyed folder name (the old scheme)', () => {
    const folder = legacyReportFolder(reportNameFor(ADDRESS));
    expect(recover(folder, legacyReportFolder)).toEqual([ADDRESS]);
  });

  it('reveal nothing of the name without the key: no slug, no unkeyed hash, nothing to check a guess against', () => {
    const name = reportNameFor(ADDRESS);
    const folder = reportFolder(name, REPORT_NAMING_KEY);

    expect(folder).toMatch(/^breach\/reports\/report-[0-9a-f]{32}\/$/);
    // The attack with every unkeyed rebuild of the name it knows: the old scheme, the name's slug,
    // the hashes of the name and of the address.
    const unkeyed = [
      legacyReportFolder,
      (n: string) => `breach/reports/report-${createHash('sha256').update(n).digest('hex').slice(0, 32)}/`,
      (n: string) => `breach/reports/${slugOf(redactText(n))}/`,
    ];
    for (const scheme of unkeyed) expect(recover(folder, scheme)).toEqual([]);
    // No part of the name or the address survives in the folder.
    for (const part of ['jane', 'roe', 'corp', 'exposure', 'report-for', '20261127']) {
      expect(folder.slice('breach/reports/report-'.length)).not.toContain(part);
    }
    // With the key (and only with it) the folder is found again, which reconciliation relies on.
    expect(recover(folder, (n) => reportFolder(n, REPORT_NAMING_KEY))).toEqual([ADDRESS]);
    expect(recover(folder, (n) => reportFolder(n, 'another-key-0123456789abcdef-0123456789abc'))).toEqual([]);
  });
});

describe('archives stored under the old folder names', () => {
  const REPORT = 'jane-doe_20261120T100000Z_abc123';
  let bed: BreachTestBed;
  beforeEach(async () => {
    bed = await startBreachBed();
    bed.sim.createReport(REPORT, { name: 'Jane Doe', emails: ['jane.doe@example.com'] });
    // An archive a release before keyed folders wrote: its ZIP and manifest under the old name.
    const zip = new ZipFile();
    zip.addBuffer(Buffer.from('email,breach\n'), 'breaches.csv', { mtime: new Date('2026-11-20T10:00:00Z') });
    zip.end();
    const chunks: Buffer[] = [];
    for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    const folder = legacyReportFolder(REPORT);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await bed.s3.client.send(
      new PutObjectCommand({
        Bucket: RESULTS_BUCKET,
        Key: `${folder}report.zip`,
        Body: bytes,
        Metadata: { sha256 },
      }),
    );
    const manifest = {
      schemaVersion: 1,
      reportName: REPORT,
      origin: 'workflow',
      archivedAt: '2026-11-20T11:00:00Z',
      archive: {
        bucket: RESULTS_BUCKET,
        key: `${folder}report.zip`,
        size: bytes.length,
        sha256,
        contentType: 'application/zip',
      },
      verification: { checks: ['crc'], entryCount: 1, totalUncompressedBytes: 13 },
      entries: [],
      reconKey: null,
    };
    await bed.s3.client.send(
      new PutObjectCommand({
        Bucket: RESULTS_BUCKET,
        Key: `${folder}manifest.json`,
        Body: JSON.stringify(manifest),
      }),
    );
  });
  afterEach(async () => {
    await bed.close();
  });

  it('are found by a run and by reconciliation, and nothing is downloaded or archived again', async () => {
    const summary = await archiveReport(bed.deps, REPORT, { origin: 'reconciled' });
    const reconciled = await reconcileReports(bed.deps);

    expect(summary).toMatchObject({ key: `${legacyReportFolder(REPORT)}report.zip`, alreadyArchived: true });
    expect(reconciled.counts).toMatchObject({ archived: 0, alreadyArchived: 1 });
    expect(bed.sim.storageRequests).toHaveLength(0);
    const keys = await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/reports/');
    expect(keys.filter((key) => key.startsWith(reportFolder(REPORT, REPORT_NAMING_KEY)))).toEqual([]);
  });
});
