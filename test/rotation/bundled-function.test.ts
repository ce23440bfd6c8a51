/**
 * The rotation function as it ships: rotate-api-key bundled by esbuild with the CDK app's options,
 * wired from its environment (Secrets Manager and EventBridge through the bundled SDK, the vendor's
 * key API at KEYS_API_URL) and invoked with a Lambda-like context whose remaining time runs down.
 * Secrets Manager's part is played as the service plays it (local/rotation-driver.ts: RotateSecret,
 * then createSecret, setSecret, testSecret and finishSecret with one token, the same token again on
 * a later attempt), against the Secrets Manager stand-in and the vendor simulator over loopback.
 *
 * Real time here: the propagation window is 4 s (ROTATION_KEY_PROPAGATION_SECONDS) and the faults
 * are scaled to it. The slow answer trickles for 3 s, not 35: the bundle's per-request deadline
 * is the 30 s default, so what this proves is that the bundle reads a trickled answer whole;
 * hostile-answers.test.ts proves an answer outlasting the per-request deadline (2 s there) is read
 * whole, and `npm start -- rotate --fault rotate-answer=slow` shows the 35 s one.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { build } from 'esbuild';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RotationRequest } from '#lambdas/rotation/request';
import type { RotationStepResult } from '#lambdas/rotation/steps';
import { driveRotation } from '#local/rotation-driver';
import { type SecretsManagerServer, startSecretsManagerServer } from '#local/secrets-manager/server';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import type { RotateAnswerFault } from '#local/simulator/rotate-answers';
import { handlerEntry, REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { PIPELINE_BUILD_OPTIONS } from '../kit/handler-bundles.ts';
import { ROTATE_ROUTE } from './harness.ts';

const WINDOW_SECONDS = 4;
/** What Lambda would tell the function: the deployed timeout, counting down from each invocation. */
const INVOCATION_MS = 600_000;

type BundledHandler = (
  event: RotationRequest,
  context: { getRemainingTimeInMillis(): number },
) => Promise<RotationStepResult>;

let bundleDir: string;
let handler: BundledHandler;
let sim: VendorSimulator;
let secretsManager: SecretsManagerServer;
let eventBridge: Server;
let client: SecretsManagerClient;
const published: string[] = [];

/** rotate-api-key as the CDK app bundles it (PIPELINE_BUNDLING), written out and imported. */
async function bundleRotationFunction(): Promise<BundledHandler> {
  bundleDir = await mkdtemp(join(tmpdir(), 'rotate-api-key-bundle-'));
  const result = await build({
    ...PIPELINE_BUILD_OPTIONS,
    entryPoints: [relative(REPO_ROOT, handlerEntry('rotate-api-key'))],
  });
  const file = join(bundleDir, 'index.mjs');
  await writeFile(file, result.outputFiles[0]?.contents ?? '');
  return ((await import(pathToFileURL(file).href)) as { handler: BundledHandler }).handler;
}

/** EventBridge's PutEvents over loopback, in its wire protocol (AWS JSON 1.1): accepts every entry. */
async function startEventBridge(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      published.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: `event-${published.length}` }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

beforeAll(async () => {
  [sim, secretsManager, eventBridge] = await Promise.all([
    startVendorSimulator({ pollsToFinish: 0 }),
    startSecretsManagerServer(),
    startEventBridge(),
  ]);
  client = new SecretsManagerClient({
    endpoint: secretsManager.url,
    region: secretsManager.store.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  handler = await bundleRotationFunction();
}, 120_000);

beforeEach(() => {
  // The deployed function's environment (lib/workflows/rotation/key-rotation.ts), with the AWS
  // endpoints on loopback. Stubbed per test (the suite unstubs before each); the bundle reads it
  // once, at its first invocation.
  const env: Record<string, string> = {
    KEYS_API_URL: sim.url,
    ORG_UUID: sim.orgUuid,
    ROTATION_CLAIM_LEASE_SECONDS: '660',
    ROTATION_KEY_PROPAGATION_SECONDS: String(WINDOW_SECONDS),
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.url,
    AWS_ENDPOINT_URL_EVENTBRIDGE: `http://127.0.0.1:${(eventBridge.address() as AddressInfo).port}`,
    AWS_REGION: secretsManager.store.region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
});

afterAll(async () => {
  client?.destroy();
  await Promise.all([
    sim?.close(),
    secretsManager?.close(),
    new Promise((resolve) => eventBridge?.close(resolve)),
  ]);
  if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
});

/** A secret holding the vendor's key as it is now, as an operator seeds it. */
async function seededSecret(name: string): Promise<string> {
  const created = await client.send(
    new CreateSecretCommand({
      Name: `bundled/${name}`,
      SecretString: JSON.stringify({ apiKey: sim.apiKey, orgUuid: sim.orgUuid }),
    }),
  );
  return created.ARN ?? `bundled/${name}`;
}

/** One Secrets Manager attempt: the four steps for the pending token (or a new one), each a fresh invocation. */
function attempt(secretId: string) {
  return driveRotation(client, secretId, (request) => {
    const ends = Date.now() + INVOCATION_MS;
    return handler(request, { getRemainingTimeInMillis: () => ends - Date.now() });
  });
}

const apiKeyAt = (secretId: string, stage: string) =>
  (JSON.parse(secretsManager.store.valueAt(secretId, stage) ?? '{}') as { apiKey?: string }).apiKey;
const stagesOf = (secretId: string) => Object.values(secretsManager.store.stagesOf(secretId)).flat();

describe('the bundled rotation function against hostile rotate answers', () => {
  it.each<[string, RotateAnswerFault]>([
    [
      `a new key refused for 2 s, within the ${WINDOW_SECONDS} s window`,
      { shape: 'default', delaySeconds: 2 },
    ],
    ['a 9 MiB answer with the key near its start', { shape: 'huge' }],
    ['an answer trickled over 3 s', { shape: 'slow', trickleSeconds: 3 }],
    ['the key in use handed back', { shape: 'same-key' }],
    ['30 key-shaped decoys before the key', { shape: 'decoy-first', decoys: 30 }],
  ])('%s: the working key ends in AWSCURRENT, one rotate', async (name, fault) => {
    // Prepare
    const secretId = await seededSecret(name.replace(/[^\w]+/g, '-'));
    sim.addFault({ api: 'keys', fault: { type: 'rotate-answer', ...fault } });
    const rotates = sim.requestCount(ROTATE_ROUTE);
    const events = published.length;

    // Act
    const run = await attempt(secretId);

    // Assess
    expect(run.error).toBeUndefined();
    expect(run.steps.map((step) => step.outcome)).toEqual([
      fault.shape === 'same-key' ? 'key-unchanged' : 'rotated',
      'nothing-to-set',
      'pending-key-works',
      'finished',
    ]);
    expect(apiKeyAt(secretId, 'AWSCURRENT')).toBe(sim.apiKey);
    expect(stagesOf(secretId)).not.toContain('AWSPENDING');
    expect(sim.requestCount(ROTATE_ROUTE) - rotates).toBe(1);
    expect(published.length - events).toBe(1);
  });

  it(`a key refused for longer than the window: RotationResponseLost, then a retry that finds it finishes without a second rotate`, async () => {
    // Prepare: the key works 7 s after the rotate; the window is 4 s.
    const secretId = await seededSecret('late-key');
    sim.addFault({ api: 'keys', fault: { type: 'rotate-answer', shape: 'default', delaySeconds: 7 } });
    const rotates = sim.requestCount(ROTATE_ROUTE);
    const started = Date.now();

    // Act
    const first = await attempt(secretId);
    const firstTook = Date.now() - started;
    const pendingAfterFirst = secretsManager.store.valueAt(secretId, 'AWSPENDING');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 7_500 - Date.now())));
    const retry = await attempt(secretId);

    // Assess
    expect((first.error as Error | undefined)?.name).toBe('RotationResponseLost');
    expect(firstTook).toBeGreaterThanOrEqual(WINDOW_SECONDS * 1000);
    expect(pendingAfterFirst).toBeUndefined();
    expect(retry.token).toBe(first.token);
    expect(retry.error).toBeUndefined();
    expect(retry.steps[0]?.outcome).toBe('resumed-from-answer');
    expect(apiKeyAt(secretId, 'AWSCURRENT')).toBe(sim.apiKey);
    expect(stagesOf(secretId)).not.toContain('AWSPENDING');
    expect(sim.requestCount(ROTATE_ROUTE) - rotates).toBe(1);
  });
});
