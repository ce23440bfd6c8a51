/**
 * The rotation function as it ships, and the AWS it talks to: rotate-api-key bundled by esbuild with
 * the CDK app's options, written out and imported; the Secrets Manager stand-in and an EventBridge
 * PutEvents endpoint over loopback in their wire protocols; and the function's environment as the
 * stack sets it, with those endpoints. Secrets Manager's part is played as the service plays it
 * (local/runner/rotation-driver.ts), each step a fresh invocation with a Lambda-like context whose
 * remaining time runs down.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { build } from 'esbuild';
import { vi } from 'vitest';
import { handlerEntryPath } from '#lambdas/registry';
import type { RotationRequest } from '#lambdas/rotation/request';
import type { RotationStepResult } from '#lambdas/rotation/rotation-step';
import { driveRotation } from '#local/runner/rotation-driver';
import { type SecretsManagerServer, startSecretsManagerServer } from '#local/services/secrets-manager/server';
import { handlerEntry, REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { PIPELINE_BUILD_OPTIONS } from '../kit/handler-bundles.ts';

/** What Lambda would tell the function: the deployed timeout, counting down from each invocation. */
const INVOCATION_MS = 600_000;

type BundledHandler = (
  event: RotationRequest,
  context: { getRemainingTimeInMillis(): number },
) => Promise<RotationStepResult>;

export interface BundledWorld {
  readonly secretsManager: SecretsManagerServer;
  readonly client: SecretsManagerClient;
  /** Every PutEvents body the function sent, in order. */
  readonly published: readonly string[];
  /** Sets the function's environment (call before each test: the suite unstubs it). */
  stubEnvironment(
    vendor: { readonly keysApiUrl: string; readonly orgUuid: string },
    windowSeconds: number,
    logLevel?: 'SILENT' | 'DEBUG',
  ): void;
  /** A secret holding `value`, as an operator seeds it; returns its ARN. */
  seededSecret(name: string, value: Record<string, unknown>): Promise<string>;
  /** One Secrets Manager attempt: the four steps for the pending token (or a new one). */
  attempt(secretId: string): ReturnType<typeof driveRotation>;
  close(): Promise<void>;
}

/** rotate-api-key as the CDK app bundles it (PIPELINE_BUNDLING), written out to `dir` and imported. */
async function bundleRotationFunction(dir: string): Promise<BundledHandler> {
  const result = await build({
    ...PIPELINE_BUILD_OPTIONS,
    entryPoints: [relative(REPO_ROOT, handlerEntry(handlerEntryPath('rotate-api-key')))],
  });
  const file = join(dir, 'index.mjs');
  await writeFile(file, result.outputFiles[0]?.contents ?? '');
  return ((await import(pathToFileURL(file).href)) as { handler: BundledHandler }).handler;
}

/** EventBridge's PutEvents over loopback, in its wire protocol (AWS JSON 1.1): accepts every entry. */
async function startEventBridge(published: string[]): Promise<Server> {
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

export async function startBundledWorld(): Promise<BundledWorld> {
  const bundleDir = await mkdtemp(join(tmpdir(), 'rotate-api-key-bundle-'));
  const published: string[] = [];
  const [secretsManager, eventBridge, handler] = await Promise.all([
    startSecretsManagerServer(),
    startEventBridge(published),
    bundleRotationFunction(bundleDir),
  ]);
  const client = new SecretsManagerClient({
    endpoint: secretsManager.url,
    region: secretsManager.store.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    secretsManager,
    client,
    published,
    stubEnvironment(vendor, windowSeconds, logLevel = 'SILENT') {
      // The deployed function's environment (lib/workflows/rotation/key-rotation.ts), with the AWS
      // endpoints on loopback. The bundle reads it once, at its first invocation.
      const env: Record<string, string> = {
        KEYS_API_URL: vendor.keysApiUrl,
        ORG_UUID: vendor.orgUuid,
        ROTATION_CLAIM_LEASE_SECONDS: '660',
        ROTATION_KEY_PROPAGATION_SECONDS: String(windowSeconds),
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.url,
        AWS_ENDPOINT_URL_EVENTBRIDGE: `http://127.0.0.1:${(eventBridge.address() as AddressInfo).port}`,
        AWS_REGION: secretsManager.store.region,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        POWERTOOLS_METRICS_DISABLED: 'true',
        POWERTOOLS_LOG_LEVEL: logLevel,
      };
      for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    },
    async seededSecret(name, value) {
      const created = await client.send(
        new CreateSecretCommand({ Name: `bundled/${name}`, SecretString: JSON.stringify(value) }),
      );
      return created.ARN ?? `bundled/${name}`;
    },
    attempt(secretId) {
      return driveRotation(client, secretId, (request) => {
        const ends = Date.now() + INVOCATION_MS;
        return handler(request, { getRemainingTimeInMillis: () => ends - Date.now() });
      });
    },
    async close() {
      client.destroy();
      await Promise.all([secretsManager.close(), new Promise((resolve) => eventBridge.close(resolve))]);
      await rm(bundleDir, { recursive: true, force: true });
    },
  };
}
