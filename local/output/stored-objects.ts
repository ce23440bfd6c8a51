/**
 * What an export keeps, without the S3 client: the output folder's layout (`<out>/<bucket>/<key>`)
 * and the synchronous export from the embedded S3's own files, which an interrupt that must exit
 * at once, and the rescue of a killed run's folder, use. No AWS SDK here: the CLI loads this before
 * it has read its arguments (see local/cli/main.ts), and a usage error must answer at once.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export interface ExportReport {
  readonly written: number;
  readonly unchanged: number;
  /** Files that already existed with other content: left as they were (nothing local is overwritten). */
  readonly kept: readonly string[];
}

export interface WrittenObject {
  readonly bucket: string;
  readonly key: string;
}

/** The local path for an object, refusing keys that would escape the output folder. */
export function localPathFor(outDir: string, bucket: string, key: string): string {
  const root = resolve(outDir, bucket);
  const target = resolve(root, key);
  if (!target.startsWith(root + sep)) {
    throw new Error(`Object key escapes the output folder and was not exported: ${JSON.stringify(key)}`);
  }
  return target;
}

/** Where an export puts what it exports, and which existing files of this tool's it may replace. */
export interface Placement {
  /** The file an object goes to instead of `<out>/<bucket>/<key>` (undefined: there). */
  readonly targetOf?: (object: WrittenObject) => string | undefined;
  /**
   * Files of this tool's that the run read from the output folder and carried on, by path, with
   * their SHA-256 then: one still holding those bytes is replaced by the run's copy. Any other
   * existing file that differs is the user's, and is never replaced.
   */
  readonly carried?: ReadonlyMap<string, string>;
}

/** An object whose bytes are in a file of the embedded S3's folder. */
export interface StoredObject extends WrittenObject {
  readonly file: string;
}

function sha256OfFileSync(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * `exportObjects` without the server, synchronously, from the files the embedded S3 wrote: what an
 * interrupt that must exit at once still keeps, and how a later run rescues what a killed run left.
 * The same rules: a hard link where possible (else a copy), and a differing local file is never
 * replaced.
 */
export function exportStoredObjectsSync(
  objects: Iterable<StoredObject>,
  outDir: string,
  placement: Placement = {},
): ExportReport {
  let written = 0;
  let unchanged = 0;
  const kept: string[] = [];
  for (const object of objects) {
    const target = placement.targetOf?.(object) ?? localPathFor(outDir, object.bucket, object.key);
    if (existsSync(target)) {
      const existing = sha256OfFileSync(target);
      if (existing === sha256OfFileSync(object.file)) {
        unchanged += 1;
        continue;
      }
      if (placement.carried?.get(target) !== existing) {
        kept.push(target);
        continue;
      }
    }
    mkdirSync(dirname(target), { recursive: true });
    const temporary = `${target}.partial-${process.pid}`;
    try {
      linkSync(object.file, temporary);
    } catch {
      copyFileSync(object.file, temporary);
    }
    renameSync(temporary, target);
    written += 1;
  }
  return { written, unchanged, kept };
}

/** s3rver's name for the file that holds an object's bytes: `<last key segment>._S3rver_object`. */
const S3RVER_OBJECT_SUFFIX = '._S3rver_object';

/**
 * Every complete object in an embedded S3 folder (`<dir>/<bucket>/<key>._S3rver_object`; partial
 * writes have other names), read from the disk alone: its server may be long gone.
 */
export function storedObjectsIn(s3Directory: string): StoredObject[] {
  const objects: StoredObject[] = [];
  for (const bucket of readdirSync(s3Directory, { withFileTypes: true })) {
    if (!bucket.isDirectory()) continue;
    const root = join(s3Directory, bucket.name);
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(S3RVER_OBJECT_SUFFIX)) continue;
      const file = join(entry.parentPath, entry.name);
      const key = relative(root, file).split(sep).join('/').slice(0, -S3RVER_OBJECT_SUFFIX.length);
      // Multipart uploads in progress are not objects.
      if (key.startsWith('._S3rver_uploads/')) continue;
      objects.push({ bucket: bucket.name, key, file });
    }
  }
  return objects;
}

/**
 * Exports what an embedded S3 folder holds, then removes the folder, unless a file of it differs
 * from the user's own under `outDir` (never replaced): the folder then stays, the only copy of
 * that result. Returns what was exported.
 */
export function rescueStoredObjects(s3Directory: string, outDir: string): ExportReport {
  const report = exportStoredObjectsSync(storedObjectsIn(s3Directory), outDir);
  if (report.kept.length === 0) rmSync(s3Directory, { recursive: true, force: true });
  return report;
}
