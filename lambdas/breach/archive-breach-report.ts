/**
 * Archive: stream a report's ZIP from the vendor into S3, verify it, and only then put it under its
 * final key with a manifest that lists its entries.
 *
 * The bytes go to a staging key first, whatever their size, so the final key only ever holds an
 * archive that passed every check: framing (the transport and the length check), the ZIP structure
 * and every entry's CRC (`verifyStoredZip`: the staged object's tail, then one streamed pass). The manifest is
 * written last; its presence is what "archived" means to a re-run and to reconciliation.
 *
 * Nothing verified is ever replaced: where the bytes and the manifests go, and what a run that
 * loses a race does, is archive-placement.ts.
 */
import { createHash, randomUUID } from 'node:crypto';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import {
  type ArchiveOutput,
  type ArchiveSummary,
  reconOutputSchema,
  type ValueRef,
} from '#lambdas/breach/contracts';
import type { BreachDeps } from '#lambdas/breach/deps';
import { reportFolder } from '#lambdas/breach/identity';
import type { BreachLimits } from '#lambdas/breach/limits';
import { breachDepsFromEnvironment } from '#lambdas/breach/vendor-deps';
import type { ZipLimits } from '#lambdas/breach/zip/zip-limits';
import { verifyStoredZip } from '#lambdas/breach/zip/zip-verify';
import {
  ArchiveVerificationError,
  InvalidInputError,
  VendorBodyTooLargeError,
  VendorResponseError,
} from '#lambdas/platform/errors';
import { parseWith } from '#lambdas/platform/input/schema';
import { refuseKeyInReportName, validateReportName } from '#lambdas/platform/input/validation';
import { METRIC } from '#lambdas/platform/metrics';
import { redactText, rememberAddresses } from '#lambdas/platform/redaction/redact';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { getJson, getJsonIfExists, headIfExists, putJson } from '#lambdas/platform/s3/json-objects';
import { storeDownload } from '#lambdas/platform/s3/store-download';
import { BREACH_METRIC } from '#lambdas/registry';
import {
  ARCHIVE_FILE,
  ARCHIVE_MANIFEST_FILE,
  type ArchiveManifest,
  type ArchiveOptions,
  manifestOf,
  placeVerified,
  putManifestOnce,
  summaryOf,
} from './archive-placement.ts';

export {
  ARCHIVE_FILE,
  ARCHIVE_MANIFEST_FILE,
  type ArchiveManifest,
  type ArchiveOptions,
  type ArchiveOrigin,
  CONFLICTS_FOLDER,
} from './archive-placement.ts';

/** The last refused download of a report: what failed, for the runbook and for reconciliation. */
export const VERIFICATION_FAILURE_FILE = 'verification-failure.json';
const STAGING_FOLDER = '.staging/';
const OPERATION = 'breach.download';

function zipLimitsOf(limits: BreachLimits): ZipLimits {
  return {
    maxEntries: 10_000,
    maxUncompressedBytes: limits.maxUncompressedBytes,
    maxCompressionRatio: limits.maxCompressionRatio,
  };
}

export async function archiveReport(
  deps: BreachDeps,
  reportNameInput: string,
  options: ArchiveOptions,
): Promise<ArchiveSummary> {
  const reportName = refuseKeyInReportName(
    validateReportName(reportNameInput, 'reportName'),
    'breach.download',
  );
  const folder = reportFolder(reportName, await deps.reportNamingKey());
  const bucket = deps.settings.resultsBucket;
  const finalKey = `${folder}${ARCHIVE_FILE}`;
  const manifestKey = `${folder}${ARCHIVE_MANIFEST_FILE}`;

  const existing = (await getJsonIfExists(deps, manifestKey)) as ArchiveManifest | undefined;
  // The same request's archive, or reconciliation's: nothing new to fetch. Another request that the
  // vendor answered with the same report name may have a different report behind it: its bytes are
  // fetched and compared (placeVerified links or keeps them beside), never assumed to be these.
  const sameRequest = options.origin !== 'workflow' || existing?.reconKey === (options.reconKey ?? null);
  if (existing !== undefined && sameRequest) {
    deps.logger.info('Report already archived; not downloaded again', {
      folder,
      sha256: existing.archive.sha256,
    });
    return summaryOf(existing, manifestKey, true);
  }

  // Only verified bytes are ever copied to the final key: an object there without a manifest was
  // promoted by an attempt that died before writing the manifest. Check it again and finish its job.
  const promoted = existing === undefined ? await headIfExists(deps, finalKey) : undefined;
  if (promoted !== undefined) {
    const size = promoted.ContentLength ?? 0;
    const verified = await verifyStoredZip(
      deps.s3,
      { bucket, key: finalKey, size },
      zipLimitsOf(deps.settings.limits),
    );
    const sha256 = promoted.Metadata?.sha256 ?? '';
    const manifest = manifestOf(reportName, options, finalKey, bucket, {
      size,
      sha256,
      contentType: promoted.ContentType ?? 'application/zip',
      verified,
      now: deps.clock(),
    });
    return summaryOf(await putManifestOnce(deps, manifestKey, manifest), manifestKey, true);
  }

  await removeStaged(deps, folder);
  const { maxArchiveBytes } = deps.settings.limits;
  const stagingKey = `${folder}${STAGING_FOLDER}${randomUUID()}.zip`;
  let stored: Awaited<ReturnType<typeof storeDownload>>;
  let download: Awaited<ReturnType<BreachDeps['breachClient']['download']>>;
  try {
    // The cap applies as the body streams (decoded bytes), so a compression bomb stops at it; a
    // multipart upload cut there is aborted and leaves nothing staged.
    download = await deps.breachClient.download(reportName, { maxBytes: maxArchiveBytes });
    stored = await storeDownload(download, {
      s3: deps.s3,
      bucket,
      key: stagingKey,
      operation: OPERATION,
      upload: deps.settings.upload,
      // The promotion copy below records the digest on the final key; the staged copy needs none.
      recordDigest: false,
    });
  } catch (error) {
    if (!(error instanceof VendorBodyTooLargeError)) throw error;
    throw await refused(deps, folder, reportName, new ArchiveVerificationError('limits', sizeProblem(error)));
  }

  let verified: Awaited<ReturnType<typeof verifyStoredZip>>;
  try {
    verified = await verifyStoredZip(
      deps.s3,
      {
        bucket,
        key: stagingKey,
        size: stored.size,
        ...(stored.versionId ? { versionId: stored.versionId } : {}),
      },
      zipLimitsOf(deps.settings.limits),
    );
  } catch (error) {
    await deps.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: stagingKey }));
    if (error instanceof ArchiveVerificationError)
      throw await refused(deps, folder, reportName, error, stored);
    throw error;
  }

  const placed = await placeVerified(deps, { folder, finalKey, stagingKey, stored });
  await deps.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: stagingKey }));
  const ownManifest = (key: string) =>
    manifestOf(reportName, options, key, bucket, {
      size: stored.size,
      sha256: stored.sha256,
      contentType: stored.contentType,
      verified,
      now: deps.clock(),
    });
  if (placed.kind === 'same') {
    deps.logger.info('Report archived by another run with the same bytes; linked to it', { folder });
    const manifest = await putManifestOnce(deps, manifestKey, ownManifest(finalKey));
    return summaryOf(manifest, manifestKey, true);
  }
  if (placed.kind === 'different') {
    const conflictManifestKey = placed.key.replace(/\.zip$/, '.json');
    const manifest = await putManifestOnce(deps, conflictManifestKey, ownManifest(placed.key));
    deps.metrics.record(BREACH_METRIC.archiveConflicts, 1, 'Count', {
      workflow: 'breach',
      outcome: options.origin,
    });
    deps.logger.warn('Report name already archived with other bytes; this run kept its own beside them', {
      folder,
      key: placed.key,
      sha256: stored.sha256,
      existingSha256: placed.existingSha256,
    });
    return { ...summaryOf(manifest, conflictManifestKey, false), conflictsWith: placed.existingSha256 };
  }
  const manifest = await putManifestOnce(deps, manifestKey, ownManifest(finalKey));
  deps.metrics.record(METRIC.bytesStored, stored.size, 'Bytes', { workflow: 'breach', output: 'archive' });
  deps.metrics.record(BREACH_METRIC.breachArchived, 1, 'Count', {
    workflow: 'breach',
    outcome: options.origin,
  });
  deps.logger.info('Report archived', {
    folder,
    size: stored.size,
    sha256: stored.sha256,
    entries: verified.entries.length,
    redirects: download.redirects,
    origin: options.origin,
  });
  return summaryOf(manifest, manifestKey, false);
}

/** The message of a download cut at the byte cap, without the vendor's operation prefix. */
function sizeProblem(error: VendorBodyTooLargeError): string {
  return error.message.replace(/^.*?unusable response: /, '');
}

/** Records why a download was refused (the runbook and reconciliation read it) and returns the error. */
async function refused(
  deps: BreachDeps,
  folder: string,
  reportName: string,
  error: ArchiveVerificationError,
  stored?: { readonly size: number; readonly sha256: string },
): Promise<ArchiveVerificationError> {
  deps.metrics.record(BREACH_METRIC.archiveVerificationFailures, 1, 'Count', {
    workflow: 'breach',
    outcome: error.check,
  });
  await putJson(
    deps,
    `${folder}${VERIFICATION_FAILURE_FILE}`,
    {
      schemaVersion: 1,
      reportName: redactText(reportName),
      check: error.check,
      message: error.message,
      // Unknown when the download was cut before it was stored.
      size: stored?.size ?? null,
      sha256: stored?.sha256 ?? null,
      recordedAt: deps.clock().toISOString(),
    },
    2,
  );
  return error;
}

/** Leftovers of attempts that died before verifying: never promoted, never to be listed. */
async function removeStaged(deps: BreachDeps, folder: string): Promise<void> {
  const bucket = deps.settings.resultsBucket;
  const listed = await deps.s3.send(
    new ListObjectsV2Command({ Bucket: bucket, Prefix: `${folder}${STAGING_FOLDER}` }),
  );
  for (const { Key: key } of listed.Contents ?? []) {
    if (key !== undefined) await deps.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }
}

/** ArchiveReport: the report a successful recon named, archived on behalf of this run. */
export async function archiveRunReport(deps: BreachDeps, event: unknown): Promise<ArchiveOutput> {
  const state = parseWith(reconOutputSchema, event);
  const { status, reportName, reportNameKey, outputRef, reconKey } = state.recon;
  if (status !== 'success' || (reportName === undefined && outputRef === undefined)) {
    throw new InvalidInputError(
      'recon',
      "must be a 'success' with a reportName or an outputRef to archive a report",
    );
  }
  // The state carries the redacted name (or, for a large value, a reference to it); the exact one,
  // when redaction changed it, is kept with the request.
  const name =
    reportNameKey !== undefined
      ? await exactReportName(deps, reportNameKey)
      : (reportName ?? (await reportNameByReference(deps, outputRef as ValueRef)));
  const archive = await archiveReport(deps, name, { origin: 'workflow', reconKey });
  return { ...state, archive };
}

/**
 * The vendor's exact report name, kept apart from the payload because it holds personal data, with
 * the request's addresses beside it: this function runs apart from Recon, and every text it writes
 * (the archive's manifest, a refusal record, entry names) is redacted against them by value.
 */
async function exactReportName(deps: BreachDeps, key: string): Promise<string> {
  const kept = await getJson<{ reportName?: unknown; addresses?: unknown }>(
    deps,
    deps.settings.resultsBucket,
    key,
  );
  if (typeof kept.reportName !== 'string' || kept.reportName === '') {
    throw new InvalidInputError('recon.reportNameKey', 'names an object without a reportName');
  }
  if (Array.isArray(kept.addresses)) {
    rememberAddresses(kept.addresses.filter((address): address is string => typeof address === 'string'));
  }
  return kept.reportName;
}

/**
 * The report name Recon kept out of the payload for its size. It is the vendor's value: one that
 * is no usable report name (a megabyte of text is none) is the vendor's answer failing, with the
 * whole answer kept where the reference says.
 */
async function reportNameByReference(deps: BreachDeps, ref: ValueRef): Promise<string> {
  const operation = 'breach.recon';
  const record = await getJson<Record<string, unknown>>(deps, ref.bucket, ref.key);
  const value = record[ref.field];
  if (typeof value !== 'string' || createHash('sha256').update(value, 'utf8').digest('hex') !== ref.sha256) {
    throw new InvalidInputError('recon.outputRef', `does not match the ${ref.field} stored in ${ref.key}`);
  }
  try {
    return validateReportName(value, 'output');
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    throw new VendorResponseError(
      operation,
      `its output (${ref.bytes} bytes) is not a usable report name (${error.reason}); the answer is kept in ${ref.key}`,
    );
  }
}

/** `ArchiveReport`: stream the report's ZIP into S3, verify it, promote it, write its manifest. */
export function createArchiveBreachReportHandler(deps: BreachDeps): Handler<unknown, ArchiveOutput> {
  return async (event) => archiveRunReport(deps, event);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => breachDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createArchiveBreachReportHandler,
});
