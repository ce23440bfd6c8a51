/**
 * The Parallel's fetch steps (one per row of scan-outputs.ts: FetchReport, FetchLogs, FetchDebug):
 * stream one scan output from the vendor into S3, byte for byte, with the vendor's Content-Type and
 * the SHA-256 of what was stored.
 */
import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { METRIC } from '#lambdas/platform/metrics';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { STAGING_PREFIX } from '#lambdas/platform/s3/staging';
import { headerSafe, type StoredDownload, storeDownload } from '#lambdas/platform/s3/store-download';
import { DestinationTakenError } from '#lambdas/platform/s3/stream-upload';
import type { ScanInProgress, StoredObject } from '#lambdas/scan/contracts';
import { type ScanDeps, withLogKeys } from '#lambdas/scan/deps';
import { parseOutputName, parseScanInProgress } from '#lambdas/scan/parse';
import { scanDepsFromEnvironment } from '#lambdas/scan/vendor-deps';

/** `output`: a name of the scan outputs table (SCAN_OUTPUTS). */
export type FetchScanOutputInput = ScanInProgress & { readonly output: string };

export async function fetchScanOutput(deps: ScanDeps, state: FetchScanOutputInput): Promise<StoredObject> {
  const { output, scanUuid, outputPrefix } = state;
  const row = parseOutputName(output);
  // A retried task (Lambda.ServiceException after the write, a redrive) must never replace a
  // verified object: whatever the vendor sends the second time, the first verified bytes stay.
  const earlier = await findStoredOutput(deps, outputPrefix, output);
  if (earlier.verified) {
    deps.logger.info('Scan output already stored and verified; not fetched again', {
      domain: state.domain,
      scanUuid,
      output,
      key: earlier.verified.key,
    });
    return earlier.verified;
  }
  // Leftovers of an attempt that died between its upload and its verification: never verified,
  // never to be listed by the manifest. A staged one is deleted by its version id (a plain delete
  // in the versioned bucket would keep the bytes as a noncurrent version); an unverified object at a
  // final key only gets a delete marker, as nothing here may delete a version under scans/.
  for (const { key, versionId } of earlier.leftovers) {
    const staged = key.startsWith(SCAN_STAGING_PREFIX);
    await deps.s3.send(
      new DeleteObjectCommand({
        Bucket: deps.settings.resultsBucket,
        Key: key,
        ...(versionId === undefined || !staged ? {} : { VersionId: versionId }),
      }),
    );
  }
  // Counted after decoding as the body streams: a bomb stops at the cap, and the upload that was
  // under way is abandoned, never promoted to the output's key.
  const download = await deps.scanClient.getOutput(row, scanUuid, {
    maxBytes: deps.settings.maxOutputBytes,
    maxDecodingRatio: deps.settings.maxDecodingRatio,
  });
  const key = `${outputPrefix}${output}.${extensionFor(download.contentType)}`;
  const metadata: Record<string, string> = { domain: state.domain, 'scan-uuid': scanUuid };
  const etag = headerSafe(download.etag);
  if (etag) metadata['source-etag'] = etag;

  let stored: StoredDownload;
  try {
    stored = await storeDownload(download, {
      s3: deps.s3,
      bucket: deps.settings.resultsBucket,
      key,
      operation: row.operation,
      upload: deps.settings.upload,
      metadata,
      // Large outputs are uploaded under the staging prefix and copied to `key` only once
      // verified, and only if `key` is still free.
      stagingKey: `${stagingPrefixOf(outputPrefix, output)}${randomUUID()}`,
    });
  } catch (error) {
    // A concurrent attempt (an overlapping retry) stored the output first: its verified object
    // stays, and is the answer.
    if (!(error instanceof DestinationTakenError)) throw error;
    const winner = (await findStoredOutput(deps, outputPrefix, output)).verified;
    if (!winner) throw error;
    deps.logger.info('Scan output stored meanwhile by another attempt; that one is kept', {
      domain: state.domain,
      scanUuid,
      output,
      key: winner.key,
    });
    return winner;
  }
  deps.metrics.record(METRIC.bytesStored, stored.size, 'Bytes', { workflow: 'scan', output });
  deps.logger.info('Scan output stored', {
    domain: state.domain,
    scanUuid,
    output,
    key,
    size: stored.size,
    sha256: stored.sha256,
    contentType: stored.contentType,
    method: stored.method,
    redirects: download.redirects,
  });
  return {
    name: output,
    bucket: stored.bucket,
    key: stored.key,
    size: stored.size,
    sha256: stored.sha256,
    contentType: stored.contentType,
    versionId: stored.versionId,
  };
}

interface Leftover {
  readonly key: string;
  readonly versionId: string | undefined;
}

/**
 * Uploads not yet proven complete, outside `scans/`: the only prefix where the fetch may delete an
 * object version (lambdas/scan/registry.ts). Never listed by a manifest.
 */
export const SCAN_STAGING_PREFIX = STAGING_PREFIX;

/** Where the staged uploads of one output of one scan go: `staging/<output prefix><output>-`. */
export function stagingPrefixOf(outputPrefix: string, output: string): string {
  return `${SCAN_STAGING_PREFIX}${outputPrefix}${output}-`;
}

/**
 * What an earlier attempt left for this output: a verified object (any extension: a retry may
 * get another Content-Type), and objects that were never verified (an unverified final object or
 * a staged upload), which a new attempt removes.
 */
async function findStoredOutput(
  deps: ScanDeps,
  outputPrefix: string,
  output: string,
): Promise<{ verified: StoredObject | undefined; leftovers: Leftover[] }> {
  const bucket = deps.settings.resultsBucket;
  const staging = stagingPrefixOf(outputPrefix, output);
  const [listed, stagedListing] = await Promise.all(
    [outputPrefix, staging].map((prefix) =>
      deps.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix })),
    ),
  );
  const leftovers: Leftover[] = [];
  for (const { Key: key } of stagedListing?.Contents ?? []) {
    if (key === undefined) continue;
    // Its version id is what deleting it for good takes.
    const head = await deps.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    leftovers.push({ key, versionId: head.VersionId });
  }
  let verified: StoredObject | undefined;
  for (const { Key: key } of listed?.Contents ?? []) {
    if (key === undefined) continue;
    const name = key.slice(outputPrefix.length);
    if (!name.startsWith(`${output}.`) || name.includes('/')) continue;
    const head = await deps.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    const sha256 = head.Metadata?.sha256;
    if (verified === undefined && sha256 !== undefined && /^[0-9a-f]{64}$/.test(sha256)) {
      verified = {
        name: output,
        bucket,
        key,
        size: head.ContentLength ?? 0,
        sha256,
        contentType: head.ContentType,
        versionId: head.VersionId,
      };
    } else {
      leftovers.push({ key, versionId: head.VersionId });
    }
  }
  return { verified, leftovers };
}

/**
 * The file extension for a Content-Type. Only the media type counts (parameters such as charset are
 * ignored); anything unrecognised is `bin`, since the bytes are stored as they came.
 */
export function extensionFor(contentType: string | undefined): string {
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (media === '') return 'bin';
  // ndjson before json: "application/x-ndjson" also ends in "json".
  if (
    /(^|[/+.-])(x-)?ndjson$/.test(media) ||
    media === 'application/jsonl' ||
    media === 'application/x-jsonlines'
  ) {
    return 'ndjson';
  }
  if (media === 'application/json' || media === 'text/json' || media.endsWith('+json')) return 'json';
  if (media === 'text/plain') return 'txt';
  if (media === 'text/html' || media === 'application/xhtml+xml') return 'html';
  if (media === 'application/xml' || media === 'text/xml' || media.endsWith('+xml')) return 'xml';
  if (media === 'application/zip' || media === 'application/x-zip-compressed') return 'zip';
  if (media === 'application/pdf') return 'pdf';
  return 'bin';
}

/**
 * `Fetch<Output>` (one state per scan output): stream one output into S3 with its sha256. Input: the in-progress state plus `output`, which the Parallel's branch sets.
 */
export function createFetchScanOutputHandler(deps: ScanDeps): Handler<unknown, StoredObject> {
  return async (event, context) => {
    const state = parseScanInProgress(event);
    const output = parseOutputName(state.output).name;
    const scoped = withLogKeys(deps, {
      domain: state.domain,
      scanUuid: state.scanUuid,
      output,
      requestId: context?.awsRequestId,
    });
    return fetchScanOutput(scoped, { ...state, output });
  };
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => scanDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createFetchScanOutputHandler,
});
