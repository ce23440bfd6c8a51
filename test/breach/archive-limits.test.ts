/**
 * The archive's input bounds, each against an adversarial answer from the simulator: ZIPs whose
 * entries share their bytes, inflate a thousandfold or past the total cap, or run into the central
 * directory; download bodies that inflate or run past the byte cap as they stream. Every one is
 * refused with the `limits` check recorded, and nothing is left under the report's final key.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZipFile } from 'yazl';
import { archiveReport } from '#lambdas/breach/archive-breach-report';
import { createBreachSettings } from '#lambdas/breach/deps';
import { reportFolder } from '#lambdas/breach/identity';
import type { BreachLimits } from '#lambdas/breach/limits';
import { ArchiveVerificationError } from '#lambdas/platform/errors';
import type { Fault } from '#local/simulator/types';
import { listKeys, readJson } from '../kit/s3.ts';
import { type BreachTestBed, REPORT_NAMING_KEY, RESULTS_BUCKET, startBreachBed } from './fixture.ts';

const REPORT = 'jane-doe_20261120T100000Z_abc123';
const FOLDER = reportFolder(REPORT, REPORT_NAMING_KEY);
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

let bed: BreachTestBed;
beforeEach(async () => {
  bed = await startBreachBed();
  bed.sim.createReport(REPORT, { name: 'Jane Doe', emails: ['jane.doe@example.com'] });
});
afterEach(async () => {
  await bed.close();
});

async function storedZip(files: Record<string, Buffer>): Promise<Buffer> {
  const zip = new ZipFile();
  for (const [name, content] of Object.entries(files)) {
    zip.addBuffer(content, name, { compress: false, mtime: new Date('2026-11-20T10:00:00Z') });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A stored single-entry ZIP whose central directory says the entry runs on into the directory. */
async function entryIntoCentralDirectory(): Promise<Buffer> {
  const zip = await storedZip({ 'report.json': Buffer.from('{"total_breaches":1}') });
  const eocd = zip.length - 22;
  const directory = zip.readUInt32LE(eocd + 16);
  const grow = directory - (30 + 'report.json'.length + 20) + 10;
  for (const field of [20, 24])
    zip.writeUInt32LE(zip.readUInt32LE(directory + field) + grow, directory + field);
  return zip;
}

function body(bytes: Buffer): Fault {
  return {
    type: 'status',
    status: 200,
    bodyBase64: bytes.toString('base64'),
    contentType: 'application/zip',
  };
}

function withLimits(limits: Partial<BreachLimits>) {
  return {
    ...bed.deps,
    settings: createBreachSettings({ resultsBucket: RESULTS_BUCKET, limits }),
  };
}

describe('ArchiveReport refuses adversarial archives', () => {
  it.each<[string, () => Promise<Fault>, Partial<BreachLimits>, RegExp]>([
    [
      'seven entries that all inflate the same 1 GiB stream',
      async () => ({ type: 'overlapping-zip', entries: 7, entryBytes: GiB, data: 'deflate' }),
      {},
      /inflate to 7516192768 bytes; at most 268435456/,
    ],
    [
      'seven entries over the same stored bytes (within every size bound)',
      async () => ({ type: 'overlapping-zip', entries: 7, entryBytes: MiB, data: 'stored' }),
      {},
      /entry 0 \(part-1\.bin\) and entry 1 \(part-2\.bin\) overlap/,
    ],
    [
      'a deflate bomb under the total cap (200 MiB of zeros, about 1000:1)',
      async () => ({ type: 'zip-bomb', inflatedBytes: 200 * MiB }),
      {},
      /attachments\.bin\) inflates \d+ bytes to 209715200 \(more than 100:1\)/,
    ],
    [
      'entries that inflate past the configured total',
      async () => body(await storedZip({ 'a.bin': randomBytes(MiB), 'b.bin': randomBytes(MiB) })),
      { maxUncompressedBytes: MiB },
      /inflate to 2097152 bytes; at most 1048576/,
    ],
    [
      'an entry whose data runs into the central directory',
      async () => body(await entryIntoCentralDirectory()),
      {},
      /entry 0 \(report\.json\) runs into the central directory/,
    ],
  ])('%s', async (_label, fault, limits, message) => {
    bed.sim.addFault({ api: 'storage', path: '/reports/', fault: await fault() });

    const attempt = archiveReport(withLimits(limits), REPORT, { origin: 'workflow' });

    await expect(attempt).rejects.toBeInstanceOf(ArchiveVerificationError);
    await expect(attempt).rejects.toMatchObject({ check: 'limits', message: expect.stringMatching(message) });
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, FOLDER)).toEqual([
      `${FOLDER}verification-failure.json`,
    ]);
    expect(await readJson(bed.s3.client, RESULTS_BUCKET, `${FOLDER}verification-failure.json`)).toMatchObject(
      {
        reportName: REPORT,
        check: 'limits',
      },
    );
  });
});

describe('ArchiveReport cuts a download at the byte cap as it streams', () => {
  it.each<[string, Fault, RegExp]>([
    [
      'a 10 GiB gzip bomb, chunked',
      { type: 'oversized-body', bytes: 10 * GiB, encoding: 'gzip' },
      /larger than 4194304 bytes; the download was cut there/,
    ],
    [
      'a 1 GiB chunked body without Content-Length',
      { type: 'oversized-body', bytes: GiB, encoding: 'identity' },
      /larger than 4194304 bytes; the download was cut there/,
    ],
    [
      'a body whose Content-Length is over the cap',
      body(randomBytes(5 * MiB)),
      /announced as 5242880 bytes, more than the 4194304 accepted; nothing was read/,
    ],
  ])(
    '%s: refused, nothing staged or promoted',
    async (_label, fault, message) => {
      bed.sim.addFault({ api: 'storage', path: '/reports/', fault });

      const attempt = archiveReport(withLimits({ maxArchiveBytes: 4 * MiB }), REPORT, { origin: 'workflow' });

      await expect(attempt).rejects.toMatchObject({
        name: 'ArchiveVerificationError',
        check: 'limits',
        message: expect.stringMatching(message),
      });
      // The staged multipart upload was aborted: only the failure record is under the folder.
      expect(await listKeys(bed.s3.client, RESULTS_BUCKET, FOLDER)).toEqual([
        `${FOLDER}verification-failure.json`,
      ]);
      expect(bed.metrics.recorded).toContainEqual(
        expect.objectContaining({
          name: 'ArchiveVerificationFailures',
          dimensions: { workflow: 'breach', outcome: 'limits' },
        }),
      );
    },
    30_000,
  );
});
