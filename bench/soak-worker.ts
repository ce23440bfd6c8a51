/**
 * One soak run in its own process: `npm start -- scan --domains-file <file> --concurrency <n>`
 * in-process (the CLI's main) against the vendor named by SCAN_API_URL, whose faults the parent
 * scripted; prints one JSON line with the exit code, the seconds and where summary.json is.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../local/cli.ts';

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
write(`${JSON.stringify({ exitCode, seconds, summary: summary ? join(outDir, summary) : undefined })}\n`);
