/**
 * Archive against the simulator and s3rver: the report's ZIP follows the vendor's redirects, is
 * streamed to a staging key, verified by ranged reads, and only then promoted with its manifest.
 * A body that fails any check leaves nothing under the final key, and the failure is recorded.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZipFile } from 'yazl';
import { archiveReport } from '#lambdas/breach/archive-breach-report';
import { reportFolder } from '#lambdas/breach/identity';
import { ArchiveVerificationError, VendorInsecureRedirectError } from '#lambdas/platform/errors';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { listKeys, readJson, readObject } from '../kit/s3.ts';
import { type BreachTestBed, REPORT_NAMING_KEY, RESULTS_BUCKET, startBreachBed } from './fixture.ts';

const REPORT = 'jane-doe_20261120T100000Z_abc123';
const FOLDER = reportFolder(REPORT, REPORT_NAMING_KEY);
const FIXTURES = join(import.meta.dirname, '../fixtures');
const CERT = readFileSync(join(FIXTURES, 'loopback-test-only.cert.pem'), 'utf8');
const TLS_KEY = readFileSync(join(FIXTURES, 'loopback-test-only.key.pem'), 'utf8');

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}

function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

let bed: BreachTestBed;
beforeEach(async () => {
  bed = await startBreachBed({ maxAttempts: 3 });
  bed.sim.createReport(REPORT, { name: 'Jane Doe', emails: ['jane.doe@example.com'] });
});
afterEach(async () => {
  await bed.close();
});

/** A ZIP built like the vendor's, or bytes derived from one. */
async function zipOf(files: Record<string, string | Buffer>, compress = true): Promise<Buffer> {
  const zip = new ZipFile();
  for (const [name, content] of Object.entries(files)) {
    zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name, {
      compress,
      mtime: new Date('2026-11-20T10:00:00Z'),
    });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Serves `body` from the storage origin, where the download's redirects end. */
function serveFromStorage(body: Buffer, times = 1): void {
  bed.sim.addFault({
    api: 'storage',
    path: '/reports/',
    times,
    fault: {
      type: 'status',
      status: 200,
      bodyBase64: body.toString('base64'),
      contentType: 'application/zip',
    },
  });
}

describe('ArchiveReport', () => {
  it('follows a relative then a cross-origin redirect, without the key at the storage origin', async () => {
    const summary = await archiveReport(bed.deps, REPORT, {
      origin: 'workflow',
      reconKey: 'breach/people/x/recon.json',
    });

    expect(summary).toMatchObject({
      key: `${FOLDER}report.zip`,
      manifestKey: `${FOLDER}manifest.json`,
      alreadyArchived: false,
      entryCount: 3,
    });
    expect(bed.sim.requestCount('GET /download/{report_name}')).toBe(1);
    expect(bed.sim.requestCount('GET /files/{file_name}')).toBe(1);
    expect(bed.sim.storageRequests).toHaveLength(1);
    const headers = JSON.stringify(bed.sim.storageRequests[0]?.headers).toLowerCase();
    expect(headers).not.toContain('x-api-key');
    expect(headers).not.toContain(bed.sim.apiKey.toLowerCase());
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, FOLDER)).toEqual([
      `${FOLDER}manifest.json`,
      `${FOLDER}report.zip`,
    ]);
  });

  it('keeps the entries, sizes, CRCs and sha256 in the manifest', async () => {
    const summary = await archiveReport(bed.deps, REPORT, { origin: 'workflow' });

    const manifest = await readJson<Record<string, unknown>>(
      bed.s3.client,
      RESULTS_BUCKET,
      summary.manifestKey,
    );
    const stored = await readObject(bed.s3.client, RESULTS_BUCKET, summary.key);
    expect(manifest).toMatchObject({
      reportName: REPORT,
      origin: 'workflow',
      archive: {
        key: summary.key,
        size: stored.length,
        sha256: summary.sha256,
        contentType: 'application/zip',
      },
      verification: { entryCount: 3 },
    });
    expect((manifest.entries as { name: string }[]).map((entry) => entry.name)).toEqual([
      'report.json',
      'breaches.csv',
      'README.txt',
    ]);
    for (const entry of manifest.entries as { crc32: string; size: number }[]) {
      expect(entry.crc32).toMatch(/^[0-9a-f]{8}$/);
      expect(entry.size).toBeGreaterThan(0);
    }
    expect(bed.metrics.recorded).toContainEqual(
      expect.objectContaining({
        name: 'BytesStored',
        value: stored.length,
        dimensions: { workflow: 'breach', output: 'archive' },
      }),
    );
  });

  it('downloads nothing again once archived: a re-run is a no-op', async () => {
    const first = await archiveReport(bed.deps, REPORT, { origin: 'workflow' });

    const second = await archiveReport(bed.deps, REPORT, { origin: 'reconciled' });

    expect(second).toEqual({ ...first, alreadyArchived: true });
    expect(bed.sim.storageRequests).toHaveLength(1);
    expect(bed.sim.requestCount('GET /download/{report_name}')).toBe(1);
  });

  it('refuses a redirect from https to plain http, and stores nothing', async () => {
    const plain = createHttpServer((_req, res) => res.writeHead(200, { 'content-length': 3 }).end('zip'));
    const vendor = createHttpsServer({ cert: CERT, key: TLS_KEY }, (_req, res) =>
      res.writeHead(302, { location: `http://127.0.0.1:${portOf(plain)}/reports/x.zip` }).end(),
    );
    await Promise.all([listen(plain), listen(vendor)]);
    const client = new BreachClient({
      baseUrl: `https://127.0.0.1:${portOf(vendor)}`,
      credentials: async () => 'sk_test_archive_https',
      trustedCertificates: [CERT],
      retry: { maxAttempts: 1 },
    });
    try {
      const attempt = archiveReport({ ...bed.deps, breachClient: client }, REPORT, { origin: 'workflow' });

      await expect(attempt).rejects.toBeInstanceOf(VendorInsecureRedirectError);
      expect(await listKeys(bed.s3.client, RESULTS_BUCKET, FOLDER)).toEqual([]);
    } finally {
      await client.close();
      for (const server of [plain, vendor]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });

  it.each([
    [
      'an unframed body',
      { type: 'unframed', afterBytes: 100 } as const,
      /neither Content-Length nor chunked/,
    ],
    ['a truncated body', { type: 'truncate', afterBytes: 100 } as const, /network|TRUNCATED/],
    ['a reset mid-body', { type: 'reset-mid-body', afterBytes: 100 } as const, /network/],
  ])('refuses %s and stores nothing', async (_label, fault, message) => {
    bed.sim.addFault({ api: 'storage', path: '/reports/', times: 3, fault });

    await expect(archiveReport(bed.deps, REPORT, { origin: 'workflow' })).rejects.toThrow(message);
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, FOLDER)).toEqual([]);
  });

  it.each([
    [
      'a body that is not a ZIP',
      async () => Buffer.from('<html><body>Service temporarily unavailable</body></html>'),
      'not-zip',
    ],
    [
      'a ZIP cut before its end record',
      async () => (await zipOf({ 'report.json': '{"a":1}' })).subarray(0, -22),
      'end-of-central-directory',
    ],
    [
      'a ZIP whose stored entry has a flipped byte',
      async () => {
        const zip = await zipOf({ 'report.json': '{"total_breaches":3}' }, false);
        const offset = 30 + 'report.json'.length + 5;
        zip.writeUInt8(zip.readUInt8(offset) ^ 0xff, offset);
        return zip;
      },
      'crc',
    ],
    [
      'a ZIP whose end record claims more entries than its central directory holds',
      async () => {
        const zip = await zipOf({ 'a.txt': 'a', 'b.txt': 'b' });
        const eocd = zip.length - 22;
        zip.writeUInt16LE(3, eocd + 8);
        zip.writeUInt16LE(3, eocd + 10);
        return zip;
      },
      'central-directory',
    ],
    [
      'a ZIP whose end record claims fewer entries than its central directory holds',
      async () => {
        const zip = await zipOf({ 'a.txt': 'a', 'b.txt': 'b' });
        const eocd = zip.length - 22;
        zip.writeUInt16LE(1, eocd + 8);
        zip.writeUInt16LE(1, eocd + 10);
        return zip;
      },
      'central-directory',
    ],
  ])(
    'refuses %s, records the failed check, and leaves nothing under the final key',
    async (_label, body, check) => {
      serveFromStorage(await body());

      const attempt = archiveReport(bed.deps, REPORT, { origin: 'workflow' });

      await expect(attempt).rejects.toBeInstanceOf(ArchiveVerificationError);
      await expect(attempt).rejects.toMatchObject({ check });
      expect(await listKeys(bed.s3.client, RESULTS_BUCKET, FOLDER)).toEqual([
        `${FOLDER}verification-failure.json`,
      ]);
      expect(
        await readJson(bed.s3.client, RESULTS_BUCKET, `${FOLDER}verification-failure.json`),
      ).toMatchObject({
        reportName: REPORT,
        check,
      });
      expect(bed.metrics.recorded).toContainEqual(
        expect.objectContaining({
          name: 'ArchiveVerificationFailures',
          dimensions: { workflow: 'breach', outcome: check },
        }),
      );
    },
  );

  it('archives on the next attempt once the vendor serves a good ZIP again', async () => {
    serveFromStorage(Buffer.from('not a zip at all'));
    await expect(archiveReport(bed.deps, REPORT, { origin: 'workflow' })).rejects.toBeInstanceOf(
      ArchiveVerificationError,
    );

    const summary = await archiveReport(bed.deps, REPORT, { origin: 'reconciled' });

    expect(summary.alreadyArchived).toBe(false);
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, FOLDER)).toContain(`${FOLDER}report.zip`);
  });

  it('never replaces a verified archive: a promoted ZIP without a manifest is checked again, not downloaded', async () => {
    const first = await archiveReport(bed.deps, REPORT, { origin: 'workflow' });
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    await bed.s3.client.send(new DeleteObjectCommand({ Bucket: 'breach-results', Key: first.manifestKey }));
    serveFromStorage(Buffer.from('something else entirely'), 5);

    const again = await archiveReport(bed.deps, REPORT, { origin: 'reconciled' });

    expect(again).toMatchObject({ sha256: first.sha256, size: first.size, alreadyArchived: true });
    expect(bed.sim.storageRequests).toHaveLength(1);
  });

  it.each([
    [429, 'VendorThrottledError'],
    [503, 'VendorUnavailableError'],
  ])('retries a %i on the download and archives', async (status) => {
    bed.sim.addFault({ api: 'breach', path: '/download/', fault: { type: 'status', status, retryAfter: 0 } });

    const summary = await archiveReport(bed.deps, REPORT, { origin: 'workflow' });

    expect(summary.entryCount).toBe(3);
    expect(bed.sim.requestCount('GET /download/{report_name}')).toBe(2);
  });

  it('refuses a report name that cannot be a path segment', async () => {
    await expect(archiveReport(bed.deps, '../etc/passwd', { origin: 'workflow' })).rejects.toThrow(
      /reportName: contains '\/'/,
    );
  });
});

describe('ArchiveReport of a large report', () => {
  it('streams it in parts to the staging key, verifies it and promotes it with its digest', async () => {
    const large = await startBreachBed({ simulator: { reportPaddingBytes: 20 * 1024 * 1024 } });
    try {
      large.sim.createReport(REPORT);
      const { HeadObjectCommand } = await import('@aws-sdk/client-s3');

      const summary = await archiveReport(large.deps, REPORT, { origin: 'workflow' });

      expect(summary.size).toBeGreaterThan(20 * 1024 * 1024);
      const stored = await readObject(large.s3.client, RESULTS_BUCKET, summary.key);
      const { createHash } = await import('node:crypto');
      expect(createHash('sha256').update(stored).digest('hex')).toBe(summary.sha256);
      const head = await large.s3.client.send(
        new HeadObjectCommand({ Bucket: 'breach-results', Key: summary.key }),
      );
      expect(head.Metadata).toMatchObject({ sha256: summary.sha256, verified: 'zip-crc' });
      const manifest = await readJson<{ entries: { name: string; size: number }[] }>(
        large.s3.client,
        RESULTS_BUCKET,
        summary.manifestKey,
      );
      expect(manifest.entries.at(-1)).toMatchObject({ name: 'attachments.bin', size: 20 * 1024 * 1024 });
      expect(await listKeys(large.s3.client, RESULTS_BUCKET, FOLDER)).toEqual([
        `${FOLDER}manifest.json`,
        `${FOLDER}report.zip`,
      ]);
    } finally {
      await large.close();
    }
  });
});
