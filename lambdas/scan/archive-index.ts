/**
 * What the results bucket already holds for one domain: the scan folders by uuid (with or without
 * a manifest, with or without a failure record) and the ScanRejected records of starts that never
 * got a uuid. One paginated listing per domain, not a request per scan.
 *
 * Keys are `scans/<domain>/<yyyy>/<mm>/<dd>/<uuid or rejected-hash>/<file>`, so the dates sort, and
 * a listing that starts after the day before `since` covers everything from `since` on.
 */
import { paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import { FAILURE_FILE } from './record-scan-failure.ts';
import { MANIFEST_FILE } from './write-scan-manifest.ts';

export interface ScanFolder {
  /** `scans/<domain>/<yyyy>/<mm>/<dd>/<uuid>/` */
  readonly prefix: string;
  readonly manifestKey: string | undefined;
  readonly failureKey: string | undefined;
}

export interface DomainArchive {
  /** Folders by lower-case scan uuid. A uuid in two folders (never written so) keeps the first with a manifest. */
  readonly folders: ReadonlyMap<string, ScanFolder>;
  /** Keys of `rejected-<hash>/failure.json` records: starts that may or may not have created a scan. */
  readonly rejected: readonly string[];
}

const FOLDER_KEY = /^scans\/[^/]+\/(\d{4})\/(\d{2})\/(\d{2})\/([^/]+)\/(.+)$/;
const UUID_FOLDER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function indexDomainArchive(
  deps: { readonly s3: S3Client; readonly settings: { readonly resultsBucket: string } },
  domain: string,
  since: Date | undefined,
): Promise<DomainArchive> {
  const prefix = `scans/${domain}/`;
  const startAfter =
    since === undefined ? undefined : `${prefix}${dayPath(new Date(since.getTime() - 86_400_000))}`;
  const folders = new Map<string, { prefix: string; manifestKey?: string; failureKey?: string }>();
  const rejected: string[] = [];
  const pages = paginateListObjectsV2(
    { client: deps.s3 },
    {
      Bucket: deps.settings.resultsBucket,
      Prefix: prefix,
      ...(startAfter ? { StartAfter: startAfter } : {}),
    },
  );
  for await (const page of pages) {
    for (const object of page.Contents ?? []) {
      const key = object.Key ?? '';
      const match = FOLDER_KEY.exec(key);
      if (!match) continue;
      const [, yyyy, mm, dd, folder = '', file] = match;
      if (folder.startsWith('rejected-')) {
        if (file === FAILURE_FILE) rejected.push(key);
        continue;
      }
      if (!UUID_FOLDER.test(folder)) continue;
      const folderPrefix = `${prefix}${yyyy}/${mm}/${dd}/${folder}/`;
      const entry = folders.get(folder);
      // The first folder that has (or will have) a manifest wins; another day's folder of the same
      // uuid only replaces one without.
      if (entry !== undefined && entry.prefix !== folderPrefix && entry.manifestKey !== undefined) continue;
      const current = entry?.prefix === folderPrefix ? entry : { prefix: folderPrefix };
      if (file === MANIFEST_FILE) current.manifestKey = key;
      if (file === FAILURE_FILE) current.failureKey = key;
      folders.set(folder, current);
    }
  }
  return {
    folders: new Map(
      [...folders].map(([uuid, f]) => [
        uuid,
        { prefix: f.prefix, manifestKey: f.manifestKey, failureKey: f.failureKey },
      ]),
    ),
    rejected,
  };
}

function dayPath(date: Date): string {
  const yyyy = String(date.getUTCFullYear()).padStart(4, '0');
  const mm = String(date.getUTCMonth() + 1).padStart(2, '0');
  const dd = String(date.getUTCDate()).padStart(2, '0');
  return `${yyyy}/${mm}/${dd}/`;
}
