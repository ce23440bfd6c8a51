/**
 * A storage origin whose response headers name the caller: the report ZIP's `Content-Type` carries
 * the key and an address as parameters, its `ETag` the key. Run through the synthesized
 * BreachReport definition, the archive is stored with the ZIP's media type only, and nothing of
 * that text reaches the manifest, a state payload, the S3 object's headers or the terminal.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { describeResult } from '#local/cli/breach-command';
import { runBreachReport } from '#local/runner/breach-run';
import { readJson } from '../kit/s3.ts';
import { bed, RESULTS_BUCKET, runOptions, useBreachRun } from './fixture.ts';

const WORD_KEY = 'BasaltOrchidTelescope';
const ADDRESS = 'alice.victim@corp-example.com';

useBreachRun({ simulator: { apiKey: WORD_KEY } });

/** Every file s3rver keeps: object bytes and the metadata files holding each object's headers. */
async function everythingInS3(): Promise<string> {
  const entries = await readdir(bed.s3.directory, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile() && !entry.name.includes('.zip'));
  const texts = await Promise.all(
    files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')),
  );
  return [...files.map((entry) => entry.name), ...texts].join('\n');
}

describe('a report ZIP whose headers echo the key and an address', () => {
  it('is archived as application/zip, its ETag dropped, nothing of the headers kept', async () => {
    bed.sim.addFault({
      api: 'breach',
      method: 'GET',
      path: '/download/',
      times: Number.POSITIVE_INFINITY,
      fault: { type: 'headers', set: { 'x-served-for': '{key}' } },
    });
    bed.sim.addFault({
      api: 'storage',
      method: 'GET',
      path: '/reports/',
      times: Number.POSITIVE_INFINITY,
      fault: {
        type: 'headers',
        set: {
          'content-type': `application/zip; served-for={key}; owner=${ADDRESS}`,
          etag: '"{key}"',
        },
      },
    });

    const run = await runBreachReport(runOptions(), {
      name: 'Jane Doe',
      emails: ['jane@example.com'],
      requestId: 'h1',
    });

    expect(run.outcome).toBe('archived');
    if (run.outcome !== 'archived') return;
    const { archive } = await readJson<{ archive: { key: string; manifestKey: string } }>(
      bed.s3.client,
      RESULTS_BUCKET,
      run.result.manifestKey,
    );
    const archiveManifest = await readJson(bed.s3.client, RESULTS_BUCKET, archive.manifestKey);
    expect(JSON.stringify(archiveManifest)).toContain('"contentType":"application/zip"');
    const head = await bed.s3.client.send(
      new HeadObjectCommand({ Bucket: RESULTS_BUCKET, Key: archive.key }),
    );
    expect(head.ContentType).toBe('application/zip');
    const kept = [
      JSON.stringify(run),
      describeResult(run, '/out'),
      bed.logger.text(),
      await everythingInS3(),
    ].join('\n');
    expect(kept).not.toContain(WORD_KEY);
    expect(kept).not.toContain(ADDRESS);
  });
});
