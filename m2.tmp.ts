import { runSimulation, runUnsafeSimulation } from '@cloud-copilot/iam-simulate';
import { loadLocalPipelineConfig } from './local/config.ts';
import { cachedSynthesis } from './local/synth-cache.ts';
const { iam: view } = await cachedSynthesis(await loadLocalPipelineConfig(process.cwd()));
const fn = view.functions['fetch-scan-output']!;
const res = `arn:aws:s3:::${view.buckets.results}/scans/a/b/report.json`;
const sim = { request: { principal: `arn:aws:sts::111122223333:assumed-role/${fn.roleName}/${fn.functionName}`, action: 's3:PutObject', resource: { resource: res, accountId: '111122223333' },
  contextVariables: { 'aws:SecureTransport': 'true', 's3:TlsVersion': '1.3', 'aws:PrincipalArn': fn.roleArn, 'aws:CurrentTime': new Date().toISOString() } },
  identityPolicies: fn.policies.map((p) => ({ name: p.name, policy: p.policy })), serviceControlPolicies: [], resourceControlPolicies: [], resourcePolicy: view.resourcePolicies[`arn:aws:s3:::${view.buckets.results}`] };
for (const [name, f] of [['safe', async () => (await runSimulation(sim as never, {})).resultType], ['unsafe', async () => runUnsafeSimulation(sim as never, {})]] as const) {
  await f(); let n = 0; const t = performance.now();
  while (performance.now() - t < 3000) { await f(); n++; }
  console.log(name, Math.round(n / ((performance.now() - t) / 1000)), 'per s', await f());
}
