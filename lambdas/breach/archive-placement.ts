/**
 * Where ArchiveReport puts verified report bytes and how it describes them: the archive's manifest,
 * and the placement rule that nothing verified is ever replaced. The final key and every manifest
 * are written only where nothing is (S3's `If-None-Match: *`); a run that loses the race links to
 * the winner's bytes when they are the same, and keeps its own beside them under
 * `conflicts/<sha256>.zip` when they differ, so every person's record names bytes that exist.
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { ArchiveSummary } from '#lambdas/breach/contracts';
import type { BreachDeps } from '#lambdas/breach/deps';
import type { verifyStoredZip, ZipEntrySummary } from '#lambdas/breach/zip/zip-verify';
import { jsonText } from '#lambdas/platform/input/text-encoding';
import { redactText } from '#lambdas/platform/redaction/redact';
import { getJson, headIfExists } from '#lambdas/platform/s3/json-objects';
import { DestinationTakenError, isPreconditionFailure, promoteVerified } from '#lambdas/platform/s3/promote';
import type { storeDownload } from '#lambdas/platform/s3/store-download';

export const ARCHIVE_FILE = 'report.zip';
export const ARCHIVE_MANIFEST_FILE = 'manifest.json';
/** Verified bytes of a report that differ from the archive already under its name, by digest. */
export const CONFLICTS_FOLDER = 'conflicts/';
/** Who archived it: the workflow right after its recon, or reconciliation catching up later. */
export type ArchiveOrigin = 'workflow' | 'reconciled';

/** The archive's manifest: what was stored, proven how, and what the ZIP holds. */
export interface ArchiveManifest {
  readonly schemaVersion: 1;
  /** The vendor's report name, redacted (`redactText`). */
  readonly reportName: string;
  readonly origin: ArchiveOrigin;
  readonly archivedAt: string;
  readonly archive: {
    readonly bucket: string;
    readonly key: string;
    readonly size: number;
    readonly sha256: string;
    readonly contentType: string;
  };
  readonly verification: {
    readonly checks: readonly string[];
    readonly entryCount: number;
    readonly totalUncompressedBytes: number;
  };
  readonly entries: readonly ZipEntrySummary[];
  /** The recon record that named the report, when the workflow archived it. */
  readonly reconKey: string | null;
}

export interface ArchiveOptions {
  readonly origin: ArchiveOrigin;
  readonly reconKey?: string;
}

const CHECKS = [
  'framing',
  'size',
  'local-file-header',
  'end-of-central-directory',
  'central-directory',
  'limits',
  'crc',
];

export function manifestOf(
  reportName: string,
  options: ArchiveOptions,
  key: string,
  bucket: string,
  stored: {
    size: number;
    sha256: string;
    contentType: string;
    verified: Awaited<ReturnType<typeof verifyStoredZip>>;
    now: Date;
  },
): ArchiveManifest {
  return {
    schemaVersion: 1,
    reportName: redactText(reportName),
    origin: options.origin,
    archivedAt: stored.now.toISOString(),
    archive: { bucket, key, size: stored.size, sha256: stored.sha256, contentType: stored.contentType },
    verification: {
      checks: CHECKS,
      entryCount: stored.verified.entries.length,
      totalUncompressedBytes: stored.verified.totalUncompressedBytes,
    },
    // Entry names are the vendor's text too (a file may be named after an address).
    entries: stored.verified.entries.map((entry) => ({ ...entry, name: redactText(entry.name) })),
    reconKey: options.reconKey ?? null,
  };
}

export function summaryOf(
  manifest: ArchiveManifest,
  manifestKey: string,
  alreadyArchived: boolean,
): ArchiveSummary {
  return {
    bucket: manifest.archive.bucket,
    key: manifest.archive.key,
    manifestKey,
    size: manifest.archive.size,
    sha256: manifest.archive.sha256,
    entryCount: manifest.verification.entryCount,
    alreadyArchived,
  };
}

type Placement =
  | { readonly kind: 'promoted' }
  | { readonly kind: 'same' }
  | { readonly kind: 'different'; readonly key: string; readonly existingSha256: string };

/**
 * Puts the verified staged bytes at the report's final key if nothing is there; otherwise compares
 * digests with what is (another run's verified archive): the same bytes need nothing more, other
 * bytes go to `conflicts/<sha256>.zip`, again only where nothing is.
 */
export async function placeVerified(
  deps: BreachDeps,
  placing: {
    readonly folder: string;
    readonly finalKey: string;
    readonly stagingKey: string;
    readonly stored: Awaited<ReturnType<typeof storeDownload>>;
  },
): Promise<Placement> {
  const { folder, finalKey, stagingKey, stored } = placing;
  const promote = (key: string) =>
    promoteVerified({
      s3: deps.s3,
      bucket: deps.settings.resultsBucket,
      key,
      source: { key: stagingKey, versionId: stored.versionId, etag: stored.etag, size: stored.size },
      contentType: stored.contentType,
      metadata: { sha256: stored.sha256, verified: 'zip-crc' },
      expect: 'absent',
    });
  const digestAt = async (key: string) => (await headIfExists(deps, key))?.Metadata?.sha256 ?? '';
  try {
    await promote(finalKey);
    return { kind: 'promoted' };
  } catch (error) {
    if (!(error instanceof DestinationTakenError)) throw error;
  }
  const existingSha256 = await digestAt(finalKey);
  if (existingSha256 === stored.sha256) return { kind: 'same' };
  const key = `${folder}${CONFLICTS_FOLDER}${stored.sha256}.zip`;
  try {
    await promote(key);
  } catch (error) {
    // The same bytes kept there by an earlier attempt of this conflict: content-addressed, so done.
    if (!(error instanceof DestinationTakenError) || (await digestAt(key)) !== stored.sha256) throw error;
  }
  return { kind: 'different', key, existingSha256 };
}

/**
 * Writes a manifest only where none is; when one is there already (a concurrent run of the same
 * report), returns that one: a manifest once written names bytes that exist and is never replaced.
 */
export async function putManifestOnce(
  deps: BreachDeps,
  key: string,
  manifest: ArchiveManifest,
): Promise<ArchiveManifest> {
  try {
    await deps.s3.send(
      new PutObjectCommand({
        Bucket: deps.settings.resultsBucket,
        Key: key,
        Body: jsonText(manifest, 2),
        ContentType: 'application/json',
        IfNoneMatch: '*',
      }),
    );
    return manifest;
  } catch (error) {
    if (!isPreconditionFailure(error)) throw error;
    return getJson<ArchiveManifest>(deps, deps.settings.resultsBucket, key);
  }
}
