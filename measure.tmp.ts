import { loadLocalPipelineConfig } from './local/config.ts';
import { cachedSynthesis } from './local/synth-cache.ts';
import { localRunEvaluator } from './local/iam/evaluator.ts';
import { runAs } from './local/iam/attribution.ts';
const t0 = performance.now();
const config = await loadLocalPipelineConfig(process.cwd());
const { iam: view } = await cachedSynthesis(config);
const t1 = performance.now();
const e = localRunEvaluator(view, { inputBucket: 'pipeline-input', resultsBucket: 'pipeline-results', rotatedSecret: 'security-pipeline/vendor-org-key' });
const calls: [string, string, string, Record<string, unknown>][] = [
  ['write-scan-manifest', 'S3Client', 'PutObjectCommand', { Bucket: 'pipeline-results', Key: 'scans/a/b/manifest.json' }],
  ['write-scan-manifest', 'S3Client', 'ListObjectsV2Command', { Bucket: 'pipeline-results', Prefix: 'scans/a/' }],
  ['fetch-scan-output', 'S3Client', 'CopyObjectCommand', { Bucket: 'pipeline-results', Key: 'scans/a', CopySource: 'pipeline-results/scans/b' }],
  ['start-scan', 'SecretsManagerClient', 'GetSecretValueCommand', { SecretId: 'security-pipeline/vendor-org-key' }],
];
const w0 = performance.now();
await runAs('write-scan-manifest', () => e.check('S3Client', 'PutObjectCommand', { Bucket: 'pipeline-results', Key: 'scans/warm' }));
const w1 = performance.now();
let n = 0; const s0 = performance.now();
while (performance.now() - s0 < 5000) { const [h, c, cmd, i] = calls[n % calls.length]!; await runAs(h, () => e.check(c, cmd, i)); n++; }
const s1 = performance.now();
const st = e.stats();
console.log(JSON.stringify({ loadViewMs: Math.round(t1 - t0), firstCheckMs: Math.round(w1 - w0), checks: n, simulations: st.simulations, simsPerSecond: Math.round((st.simulations - 1) / ((s1 - s0) / 1000)), denials: st.denials.length }));
