/**
 * Nothing verified is ever replaced: concurrent archives of one report name, and one name the
 * vendor reuses for another request, against the simulator and s3rver with the real archive step.
 * Every summary a person's record would take names bytes that exist in the bucket, with the digest
 * they have; the bytes under the report's final key are never overwritten.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZipFile } from 'yazl';
import { archiveReport, CONFLICTS_FOLDER } from '#lambdas/breach/archive-breach-report';
import type { ArchiveSummary } from '#lambdas/breach/contracts';
import { reportFolder } from '#lambdas/breach/identity';
import { listKeys, readJson, readObject } from '../kit/s3.ts';
import { type BreachTestBed, REPORT_NAMING_KEY, RESULTS_BUCKET, startBreachBed } from './fixture.ts';

const REPORT = 'shared-name_20261120T100000Z_abc123';
const FOLDER = reportFolder(REPORT, REPORT_NAMING_KEY);

let bed: BreachTestBed;
beforeEach(async () => {
  bed = await startBreachBed({ maxAttempts: 1 });
  bed.sim.createReport(REPORT, { name: 'Jane Doe', emails: ['jane.doe@example.com'] });
});
afterEach(async () => {
  await bed.close();
});

async function zipOf(text: string): Promise<Buffer> {
  const zip = new ZipFile();
  zip.addBuffer(Buffer.from(text), 'breaches.csv', {
    compress: true,
    mtime: new Date('2026-11-20T10:00:00Z'),
  });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The storage origin answers the next downloads with these bodies, one each, in order. */
function serveInTurn(bodies: readonly Buffer[]): void {
  for (const body of bodies) {
    bed.sim.addFault({
      api: 'storage',
      path: '/reports/',
      times: 1,
      fault: {
        type: 'status',
        status: 200,
        bodyBase64: body.toString('base64'),
        contentType: 'application/zip',
      },
    });
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Each summary's bytes and manifest, read back: what a person's record would point at. */
async function proofOf(summary: ArchiveSummary) {
  const bytes = await readObject(bed.s3.client, RESULTS_BUCKET, summary.key);
  const manifest = await readJson<{ archive: { key: string; sha256: string } }>(
    bed.s3.client,
    RESULTS_BUCKET,
    summary.manifestKey,
  );
  return { stored: sha256(bytes), named: summary.sha256, manifest: manifest.archive };
}

describe('archives of one report name that race', () => {
  it('three concurrent archives with different bytes each keep theirs, and the final key keeps the first', async () => {
    // Prepare: the vendor serves different (each valid) bytes on every read.
    const bodies = await Promise.all(
      ['one', 'two', 'three'].map((n) => zipOf(`email,breach\nj@example.com,${n}\n`)),
    );
    serveInTurn(bodies);

    // Act
    const summaries = await Promise.all(
      ['a', 'b', 'c'].map((request) =>
        archiveReport(bed.deps, REPORT, {
          origin: 'workflow',
          reconKey: `breach/requests/${request}/recon.json`,
        }),
      ),
    );

    // Assess: every record names bytes that exist, with their digest, and its manifest agrees.
    for (const summary of summaries) {
      const proof = await proofOf(summary);
      expect(proof.stored).toBe(proof.named);
      expect(proof.manifest).toMatchObject({ key: summary.key, sha256: summary.sha256 });
    }
    expect(new Set(summaries.map((s) => s.sha256))).toEqual(new Set(bodies.map(sha256)));
    const winner = summaries.filter((s) => s.key === `${FOLDER}report.zip`);
    const losers = summaries.filter((s) => s.key !== `${FOLDER}report.zip`);
    expect(winner).toHaveLength(1);
    expect(losers.map((s) => s.key).sort()).toEqual(
      losers.map((s) => `${FOLDER}${CONFLICTS_FOLDER}${s.sha256}.zip`).sort(),
    );
    for (const loser of losers) expect(loser.conflictsWith).toBe(winner[0]?.sha256);
    // The final key still holds the winner's bytes.
    expect(sha256(await readObject(bed.s3.client, RESULTS_BUCKET, `${FOLDER}report.zip`))).toBe(
      winner[0]?.sha256,
    );
    expect(bed.metrics.recorded.filter((r) => r.name === 'ArchiveConflicts')).toHaveLength(2);
  });

  it('three concurrent archives of the same bytes store them once and link the other two', async () => {
    const body = await zipOf('email,breach\nj@example.com,same\n');
    serveInTurn([body, body, body]);

    const summaries = await Promise.all(
      ['a', 'b', 'c'].map((request) =>
        archiveReport(bed.deps, REPORT, {
          origin: 'workflow',
          reconKey: `breach/requests/${request}/recon.json`,
        }),
      ),
    );

    expect(summaries.map((s) => [s.key, s.sha256])).toEqual(
      Array.from({ length: 3 }, () => [`${FOLDER}report.zip`, sha256(body)]),
    );
    expect(summaries.filter((s) => !s.alreadyArchived)).toHaveLength(1);
    expect(summaries.every((s) => s.conflictsWith === undefined)).toBe(true);
    const keys = await listKeys(bed.s3.client, RESULTS_BUCKET, FOLDER);
    expect(keys.filter((k) => k.includes(CONFLICTS_FOLDER) || k.includes('.staging/'))).toEqual([]);
  });
});

describe('a report name the vendor reuses for another request', () => {
  it("keeps the second person's different report beside the first, and leaves the first untouched", async () => {
    // Prepare: person 1's report is archived.
    const [first, second] = await Promise.all([zipOf('person,one\n'), zipOf('person,two\n')]);
    serveInTurn([first]);
    const one = await archiveReport(bed.deps, REPORT, {
      origin: 'workflow',
      reconKey: 'breach/requests/p1/recon.json',
    });

    // Act: the vendor answers person 2's recon with the same report name and other bytes.
    serveInTurn([second]);
    const two = await archiveReport(bed.deps, REPORT, {
      origin: 'workflow',
      reconKey: 'breach/requests/p2/recon.json',
    });

    // Assess
    expect(one).toMatchObject({ key: `${FOLDER}report.zip`, sha256: sha256(first), alreadyArchived: false });
    expect(two).toMatchObject({
      key: `${FOLDER}${CONFLICTS_FOLDER}${sha256(second)}.zip`,
      sha256: sha256(second),
      conflictsWith: sha256(first),
    });
    for (const summary of [one, two]) {
      const proof = await proofOf(summary);
      expect(proof.stored).toBe(summary.sha256);
    }
    expect(bed.sim.storageRequests).toHaveLength(2);
  });

  it("links the second person to the first's archive when the bytes are the same", async () => {
    const body = await zipOf('person,both\n');
    serveInTurn([body, body]);
    const one = await archiveReport(bed.deps, REPORT, {
      origin: 'workflow',
      reconKey: 'breach/requests/p1/recon.json',
    });

    const two = await archiveReport(bed.deps, REPORT, {
      origin: 'workflow',
      reconKey: 'breach/requests/p2/recon.json',
    });

    expect(two).toEqual({ ...one, alreadyArchived: true });
  });

  it('downloads nothing again for the same request or for reconciliation', async () => {
    serveInTurn([await zipOf('person,one\n')]);
    const one = await archiveReport(bed.deps, REPORT, {
      origin: 'workflow',
      reconKey: 'breach/requests/p1/recon.json',
    });

    const again = await archiveReport(bed.deps, REPORT, {
      origin: 'workflow',
      reconKey: 'breach/requests/p1/recon.json',
    });
    const reconciled = await archiveReport(bed.deps, REPORT, { origin: 'reconciled' });

    expect([again, reconciled]).toEqual([
      { ...one, alreadyArchived: true },
      { ...one, alreadyArchived: true },
    ]);
    expect(bed.sim.storageRequests).toHaveLength(1);
  });
});
