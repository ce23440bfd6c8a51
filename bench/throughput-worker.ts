/**
 * One local-throughput measurement in its own process, so its peak RSS is its own: runs
 * `npm start -- scan --domains-file <file> --min-wait 0 --max-wait 0` in-process (the CLI's main)
 * against the vendor named by SCAN_API_URL, then prints one JSON line with the figures.
 */
import { main } from '../local/cli.ts';

const [domainsFile, outDir, concurrency] = process.argv.slice(2);
if (!domainsFile || !outDir) {
  process.stderr.write('usage: throughput-worker.ts <domains-file> <out-dir> [concurrency]\n');
  process.exit(2);
}
// The CLI prints progress and a table; the figures are what matters here.
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
  '0',
  '--max-wait',
  '0',
  ...(concurrency ? ['--concurrency', concurrency] : []),
]);
const seconds = (performance.now() - started) / 1000;
write(`${JSON.stringify({ exitCode, seconds, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
process.exitCode = exitCode;
