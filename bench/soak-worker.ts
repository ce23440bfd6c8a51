/**
 * One soak run in its own process: `npm start -- scan --domains-file <file> --concurrency <n>`
 * in-process (the CLI's main) against the vendor named by SCAN_API_URL, whose faults the parent
 * scripted; prints one JSON line with the exit code, the seconds, where summary.json is, and the
 * size and SHA-256 of every file the run stored under `scans/` (the export of the embedded S3's
 * objects, byte for byte), for the parent to check against what the vendor served.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SCAN_STAGING_PREFIX } from '#lambdas/scan/fetch-scan-output';
import { main } from '../local/cli/main.ts';
import { LOCAL_RESULTS_BUCKET } from '../local/runner/local-run.ts';

const [domainsFile, outDir, concurrency] = process.argv.slice(2);
if (!domainsFile || !outDir || !concurrency) {
  process.stderr.write('usage: soak-worker.ts <domains-file> <out-dir> <concurrency>\n');
  process.exit(2);
}
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (() => true) as typeof process.stdout.write;
const started = performance.now();
const exitCode = await main([
  'scan',
  '--domains-file',
  domainsFile,
  '--out',
  outDir,
  '--min-wait',
  '1',
  '--max-wait',
  '1',
  '--deadline',
  '600',
  '--concurrency',
  concurrency,
]);
const seconds = (performance.now() - started) / 1000;
const files = await readdir(outDir, { recursive: true });
const summary = files.find((file) => file.endsWith('summary.json'));
const resultsRoot = join(outDir, LOCAL_RESULTS_BUCKET);
const stored: { key: string; bytes: number; sha256: string }[] = [];
// The outputs, and any staged upload left behind (SCAN_STAGING_PREFIX, outside scans/).
const folders = ['scans', SCAN_STAGING_PREFIX].filter((folder) => existsSync(join(resultsRoot, folder)));
const entries = await Promise.all(
  folders.map((folder) => readdir(join(resultsRoot, folder), { recursive: true, withFileTypes: true })),
);
for (const entry of entries.flat()) {
  if (!entry.isFile()) continue;
  const path = join(entry.parentPath, entry.name);
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  stored.push({ key: path.slice(resultsRoot.length + 1), bytes, sha256: hash.digest('hex') });
}
write(
  `${JSON.stringify({ exitCode, seconds, summary: summary ? join(outDir, summary) : undefined, stored })}\n`,
);
