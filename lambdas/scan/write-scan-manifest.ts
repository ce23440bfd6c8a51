/**
 * WriteManifest: the last write of a successful scan. Readers treat a folder without manifest.json
 * as incomplete, so it is written only after every output of scan-outputs.ts is stored, and it
 * lists each one, in the table's order, with the digest computed while it streamed.
 */
import { createHash } from 'node:crypto';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { InvalidInputError } from '#lambdas/platform/errors';
import { jsonText } from '#lambdas/platform/input/text-encoding';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { SCAN_METRIC } from '#lambdas/registry';
import type { ScanInProgress, ScanOutcome, StoredObject } from '#lambdas/scan/contracts';
import { type ScanDeps, storageScanDepsFromEnvironment, withLogKeys } from '#lambdas/scan/deps';
import { learnScanDuration } from '#lambdas/scan/learned-durations';
import { parseScanInProgress, parseStoredObjects } from '#lambdas/scan/parse';
import { SCAN_OUTPUT_NAMES } from '#lambdas/scan/scan-outputs';

export const MANIFEST_FILE = 'manifest.json';

export interface ScanManifest {
  readonly schemaVersion: 1;
  readonly domain: string;
  readonly scanUuid: string;
  readonly runId: string;
  /** `workflow`: the scan's own execution wrote it; `reconciled`: scan reconciliation did, later. */
  readonly origin: 'workflow' | 'reconciled';
  /** Only on reconciled manifests: when, and which failure records tell of the same scan. */
  readonly reconciliation?: ReconciledFrom;
  readonly objects: readonly {
    /** The output's name in the table (scan-outputs.ts). */
    readonly name: string;
    readonly key: string;
    readonly size: number;
    readonly sha256: string;
    readonly contentType: string | null;
    readonly versionId: string | null;
  }[];
  /** Any other object under the scan's prefix, so the manifest accounts for all of it. */
  readonly otherObjects: readonly { readonly key: string; readonly size: number }[];
  readonly finalStatus: {
    readonly state: string;
    readonly vendorStatus: string | null;
    readonly progress: number | null;
    readonly raw: string;
    readonly rawTruncated: boolean;
  };
  readonly timings: {
    readonly startedAt: string;
    readonly finishedAt: string;
    readonly pollAttempts: number;
    readonly waitedSeconds: number;
    readonly elapsedSeconds: number;
  };
}

export type WriteScanManifestInput = ScanInProgress & { readonly stored: readonly StoredObject[] };

export interface ReconciledFrom {
  readonly reconciledAt: string;
  /** Failure records of the same scan: its own (a timeout, a failed fetch) or a ScanRejected start. */
  readonly linkedFailureKeys: readonly string[];
}

/**
 * `reconciled` marks a manifest written by scan reconciliation: it counts as ScansReconciled, not
 * as a succeeded scan with a duration (the workflow that would have measured it never ran).
 */
export async function writeScanManifest(
  deps: ScanDeps,
  state: WriteScanManifestInput,
  reconciled?: ReconciledFrom,
): Promise<ScanOutcome> {
  const objects = orderedOutputs(state, deps.settings.resultsBucket, SCAN_OUTPUT_NAMES);
  const status = state.status;
  if (status === undefined) throw new InvalidInputError('status', 'is missing: the scan was never polled');
  if (status.state !== 'succeeded') {
    throw new InvalidInputError(
      'status.state',
      `is "${status.state}": a manifest is written for succeeded scans only`,
    );
  }
  const otherObjects = await otherObjectsUnder(deps, state.outputPrefix, objects);
  const finishedAt = deps.clock();
  const startedMs = Date.parse(state.poll.startedAt);
  const manifest: ScanManifest = {
    schemaVersion: 1,
    domain: state.domain,
    scanUuid: state.scanUuid,
    runId: state.runId,
    origin: reconciled === undefined ? 'workflow' : 'reconciled',
    ...(reconciled === undefined ? {} : { reconciliation: reconciled }),
    // null instead of undefined, so every field is present in the JSON.
    objects: objects.map((o) => ({
      name: o.name,
      key: o.key,
      size: o.size,
      sha256: o.sha256,
      contentType: o.contentType ?? null,
      versionId: o.versionId ?? null,
    })),
    otherObjects,
    finalStatus: {
      state: status.state,
      vendorStatus: status.vendorStatus ?? null,
      progress: status.progress ?? null,
      raw: status.raw,
      rawTruncated: status.rawTruncated,
    },
    timings: {
      startedAt: state.poll.startedAt,
      finishedAt: finishedAt.toISOString(),
      pollAttempts: state.poll.attempt,
      waitedSeconds: state.poll.waitedSeconds,
      elapsedSeconds: Number.isNaN(startedMs)
        ? 0
        : Math.max(0, Math.round((finishedAt.getTime() - startedMs) / 1000)),
    },
  };

  const manifestKey = `${state.outputPrefix}${MANIFEST_FILE}`;
  const body = Buffer.from(`${jsonText(manifest, 2)}\n`, 'utf8');
  const sha256 = createHash('sha256').update(body).digest('hex');
  await deps.s3.send(
    new PutObjectCommand({
      Bucket: deps.settings.resultsBucket,
      Key: manifestKey,
      Body: body,
      ContentLength: body.length,
      ContentType: 'application/json',
      Metadata: { domain: state.domain, 'scan-uuid': state.scanUuid, sha256 },
      ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64'),
    }),
  );
  if (reconciled === undefined) {
    deps.metrics.record(SCAN_METRIC.scansSucceeded, 1, 'Count', { workflow: 'scan' });
    deps.metrics.record(SCAN_METRIC.scanDuration, manifest.timings.elapsedSeconds, 'Seconds', {
      workflow: 'scan',
      outcome: 'succeeded',
    });
    // After the manifest, and it never throws: a lost sample only makes a later poll costlier.
    await learnScanDuration(deps, state.domain, state.poll);
  } else {
    deps.metrics.record(SCAN_METRIC.scansReconciled, 1, 'Count', { workflow: 'scan' });
  }
  deps.logger.info('Scan manifest written', {
    origin: manifest.origin,
    domain: state.domain,
    scanUuid: state.scanUuid,
    manifestKey,
    objects: objects.length,
    elapsedSeconds: manifest.timings.elapsedSeconds,
  });
  return {
    domain: state.domain,
    state: 'succeeded',
    scanUuid: state.scanUuid,
    outputPrefix: state.outputPrefix,
    manifestKey,
    error: undefined,
    ...(state.settledStart === undefined ? {} : { settledStart: state.settledStart }),
  };
}

/**
 * Everything else under the scan's prefix (a failure.json of an attempt before a redrive, say), so
 * the manifest accounts for exactly what the prefix holds. The fetch step removes its own
 * unverified leftovers, so normally this is empty.
 */
async function otherObjectsUnder(
  deps: ScanDeps,
  prefix: string,
  outputs: readonly StoredObject[],
): Promise<{ key: string; size: number }[]> {
  const listed = await deps.s3.send(
    new ListObjectsV2Command({ Bucket: deps.settings.resultsBucket, Prefix: prefix }),
  );
  const known = new Set([...outputs.map((o) => o.key), `${prefix}${MANIFEST_FILE}`]);
  return (listed.Contents ?? [])
    .filter((object) => object.Key !== undefined && !known.has(object.Key))
    .map((object) => ({ key: object.Key as string, size: object.Size ?? 0 }));
}

/** Each output of the table exactly once, stored in this bucket under this scan's prefix. */
function orderedOutputs(
  state: WriteScanManifestInput,
  bucket: string,
  names: readonly string[],
): StoredObject[] {
  const byName = new Map<string, StoredObject>();
  state.stored.forEach((object, index) => {
    if (!names.includes(object.name)) {
      throw new InvalidInputError(`stored[${index}].name`, `must be one of ${names.join(', ')}`);
    }
    if (byName.has(object.name)) {
      throw new InvalidInputError(`stored[${index}].name`, `"${object.name}" appears more than once`);
    }
    if (object.bucket !== bucket) {
      throw new InvalidInputError(`stored[${index}].bucket`, `is not the results bucket ${bucket}`);
    }
    if (!object.key.startsWith(state.outputPrefix)) {
      throw new InvalidInputError(
        `stored[${index}].key`,
        `is not under this scan's prefix ${state.outputPrefix}`,
      );
    }
    byName.set(object.name, object);
  });
  const missing = names.filter((name) => !byName.has(name));
  if (missing.length > 0) {
    throw new InvalidInputError(
      'stored',
      `lacks the ${missing.join(', ')} output${missing.length > 1 ? 's' : ''}`,
    );
  }
  return names.map((name) => byName.get(name) as StoredObject);
}

/**
 * `WriteManifest`: write `manifest.json` last, once every output is stored. Input: the in-progress
 * state with the Parallel's StoredObject (one per output) at `stored`.
 */
export function createWriteScanManifestHandler(deps: ScanDeps): Handler<unknown, ScanOutcome> {
  return async (event, context) => {
    const state = parseScanInProgress(event);
    const stored = parseStoredObjects(state.stored);
    const scoped = withLogKeys(deps, {
      domain: state.domain,
      scanUuid: state.scanUuid,
      requestId: context?.awsRequestId,
    });
    return writeScanManifest(scoped, { ...state, stored });
  };
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => storageScanDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createWriteScanManifestHandler,
});
