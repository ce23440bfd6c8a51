/**
 * A vendor whose response headers name its caller: the report's `Content-Type` carries the key or
 * an address as a parameter, its `ETag` is the key, its `Content-Encoding` a coding of its own
 * invention. Run through the synthesized ScanDomain definition, nothing of that text reaches the
 * manifest, the execution history, the S3 object's headers or its user metadata: the content type
 * is kept as its media type, the ETag dropped, the coding refused.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { readJson } from '../kit/s3.ts';
import {
  execute,
  failedOutcome,
  logger,
  RESULTS,
  s3,
  sim,
  useScanExecution,
} from './scan-execution-fixture.ts';

const WORD_KEY = 'HeadlandQuarryLantern';
const ADDRESS = 'alice.victim@corp-example.com';

useScanExecution({ apiKey: WORD_KEY });

function reportHeaders(set: Record<string, string>): void {
  sim.addFault({
    api: 'scan',
    method: 'GET',
    path: '/report/',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'headers', set },
  });
}

/** Every file s3rver keeps (object bytes and the metadata files holding each object's headers). */
async function everythingInS3(): Promise<string> {
  const entries = await readdir(s3.directory, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile());
  const texts = await Promise.all(
    files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')),
  );
  return [...files.map((entry) => entry.name), ...texts].join('\n');
}

interface Manifest {
  readonly objects: readonly { readonly key: string; readonly contentType: string | null }[];
}

describe('response headers that echo the key or an address', () => {
  it('keeps the report Content-Type as its media type and charset, and no ETag, anywhere', async () => {
    reportHeaders({
      'content-type': `text/plain; charset=utf-8; served-for={key}; owner=${ADDRESS}`,
      etag: '"{key}"',
    });

    const run = await execute('headers.example.com');

    expect(run.result.outcome?.state).toBe('succeeded');
    const manifest = await readJson<Manifest>(s3.client, RESULTS, run.result.outcome?.manifestKey ?? '');
    const report = manifest.objects.find((object) => /\/report\.[a-z]+$/.test(object.key));
    expect(report?.contentType).toBe('text/plain; charset=utf-8');
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: RESULTS, Key: report?.key ?? '' }));
    expect(head.ContentType).toBe('text/plain; charset=utf-8');
    expect(head.Metadata?.['source-etag']).toBeUndefined();
    const kept = [JSON.stringify(run.events), logger.text(), await everythingInS3()].join('\n');
    expect(kept).not.toContain(WORD_KEY);
    expect(kept).not.toContain(ADDRESS);
  });

  it('drops a media type that is itself the key or an address', async () => {
    reportHeaders({ 'content-type': 'application/{key}', etag: `W/"${ADDRESS}"` });

    const run = await execute('media.example.com');

    expect(run.result.outcome?.state).toBe('succeeded');
    const manifest = await readJson<Manifest>(s3.client, RESULTS, run.result.outcome?.manifestKey ?? '');
    const report = manifest.objects.find((object) => /\/report\.[a-z]+$/.test(object.key));
    expect(report?.contentType).toBe('application/octet-stream');
    const kept = [JSON.stringify(run.events), logger.text(), await everythingInS3()].join('\n');
    expect(kept).not.toContain(WORD_KEY);
    expect(kept).not.toContain(ADDRESS);
  });

  it('refuses an unregistered Content-Encoding by name instead of labelling an S3 object with it', async () => {
    reportHeaders({ 'content-encoding': 'x-{key}' });

    const run = await execute('coding.example.com');

    const outcome = failedOutcome(run, 'OutputFetchFailed');
    expect(JSON.stringify(outcome)).toContain('unregistered Content-Encoding');
    expect(sim.requestCount('GET /report/{uuid}')).toBe(1);
    const kept = [JSON.stringify(run.events), logger.text(), await everythingInS3()].join('\n');
    expect(kept).not.toContain(WORD_KEY);
  });
});
