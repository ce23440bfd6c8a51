/**
 * One local-throughput measurement in its own process, so its peak RSS is its own: runs
 * `npm start -- scan --domains-file <file> --min-wait 1 --max-wait 1` in-process (the CLI's main)
 * against the vendor named by SCAN_API_URL, then prints one JSON line with the figures.
 */
import { main } from '../local/cli/main.ts';

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
  // Step Functions waits whole seconds; 1 s is the shortest poll wait the settings allow.
  '--min-wait',
  '1',
  '--max-wait',
  '1',
  '--deadline',
  '300',
  ...(concurrency ? ['--concurrency', concurrency] : []),
]);
const seconds = (performance.now() - started) / 1000;
write(`${JSON.stringify({ exitCode, seconds, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
process.exitCode = exitCode;
