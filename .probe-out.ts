import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startVendorSimulator } from './local/simulator/index.ts';
import { main } from './local/cli.ts';
const vendor = await startVendorSimulator({ pollsToFinish: 0, reportBytes: 512, debugBytes: 256, logsBytes: 256, failingDomains: [/^fail/] });
process.env.SCAN_API_URL = vendor.url; process.env.VENDOR_API_KEY = vendor.apiKey;
const dir = await mkdtemp(join(tmpdir(), 'probe-'));
const lines = ['domain,owner'];
for (let i = 1; i < 64; i++) lines.push(i % 8 === 0 ? `bad domain ${i},x` : i % 16 === 1 ? `fail${i}.example.com,x` : `d${i}.example.com,x`);
await writeFile(join(dir, 'export.csv'), lines.join('\n') + '\n');
const out: string[] = [];
const w = process.stdout.write.bind(process.stdout);
for (let round = 0; round < 2; round++) {
  const t = performance.now(); const c = process.cpuUsage();
  process.stdout.write = ((s: string) => (out.push(String(s)), true)) as never;
  const code = await main(['scan', '--domains-file', join(dir, 'export.csv'), '--out', join(dir, `out${round}`), '--min-wait', '1', '--max-wait', '1', '--deadline', '60', '--concurrency', '250'], { timing: { waitOverrideMs: 0, retryIntervalMs: 0, vendorBackoffMs: 0 } });
  process.stdout.write = w;
  const cu = process.cpuUsage(c);
  console.log('round', round, 'code', code, 'wall', Math.round(performance.now() - t), 'cpu', Math.round((cu.user + cu.system) / 1000));
}
await vendor.close();
