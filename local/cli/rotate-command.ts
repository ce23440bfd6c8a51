/**
 * `npm start -- rotate`: rotates the org key with the real rotation function, driven the way
 * Secrets Manager drives it (RotateSecret's value-less AWSPENDING, then the four steps with one
 * token), then scans one domain with credentials read from the rotated secret, as the deployed
 * handlers read them, to prove that dependents keep working.
 *
 * Prints a fingerprint of the key (a short SHA-256), the vendor's key id and creation time before
 * and after, never the key or any part of it. Exit 0 when the rotation finished and the scan
 * succeeded; 1 otherwise; 2 for usage and configuration errors.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CreateSecretCommand,
  DescribeSecretCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { InvalidArgumentError } from 'commander';
import { ConfigurationError } from '#lambdas/platform/errors';
import { numberFromText } from '#lambdas/platform/input/schema';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import { redactText } from '#lambdas/platform/redaction/redact';
import { ENV } from '#lambdas/platform/runtime/variables';
import {
  createSecretsManagerReader,
  credentialProviderFromSecret,
  parseVendorCredentials,
} from '#lambdas/platform/secrets';
import { ROTATION_METRIC, VENDOR_APIS } from '#lambdas/registry';
import type { ApiKeyRotatedDetail, RotationDeps } from '#lambdas/rotation/deps';
import { DEFAULT_ROTATION_SETTINGS, keyManagementFactory, ROTATION_EVENT } from '#lambdas/rotation/deps';
import { createSecretWriter, STAGE } from '#lambdas/rotation/secret-writer';
import { isRecord } from '#lambdas/vendor-api/transport/json';
import { createRotateApiKeyHandler } from '../../lambdas/rotation/rotate-api-key.ts';
import {
  MAX_KEY_PROPAGATION_SECONDS,
  ROTATION_FUNCTION_TIMEOUT_SECONDS,
} from '../../lib/config/rotation-schema.ts';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import { createWaitNotices } from '../output/progress.ts';
import type { LogLevel } from '../output/run-files.ts';
import { say } from '../output/terminal-text.ts';
import { withLocalRun } from '../runner/local-run.ts';
import { scanOneDomain } from '../runner/one-domain-scan.ts';
import type { LocalTiming } from '../runner/pipeline.ts';
import { driveRotation } from '../runner/rotation-driver.ts';
import { runAs } from '../services/iam/attribution.ts';
import {
  connectSecretsManager,
  SECRETS_MANAGER_ENDPOINT_VARIABLE,
} from '../services/secrets-manager/connect.ts';
import { validateFaultRule } from '../simulator/faults.ts';
import {
  isRotateAnswerShape,
  ROTATE_ANSWER_SHAPES,
  type RotateAnswerFault,
  type RotateAnswerTuning,
} from '../simulator/rotate-answers.ts';
import { userPath } from './cli-args.ts';
import { domainFlag, UsageError } from './cli-checks.ts';
import { rotationWaits } from './rotation-waits.ts';

const COMMAND = 'rotate';

export interface RotateCommandOptions {
  readonly out: string;
  readonly logLevel: LogLevel;
  /** The domain scanned with the rotated key afterwards. */
  readonly checkDomain: string;
  /**
   * `rotate-answer=<shape>[,tuning]` and `rotate-delay=<seconds>`: how the simulator answers the
   * rotate (simulator only).
   */
  readonly fault?: readonly string[] | string | undefined;
  /** @default {}: the check scan waits as the definition says */
  readonly timing?: LocalTiming;
  /** `--propagation-seconds`: the window instead of `rotation.keyPropagationSeconds`. */
  readonly propagationSeconds?: number | undefined;
}

/** `--propagation-seconds`, held to the bounds of rotation.keyPropagationSeconds. */
const propagationFlag = numberFromText({ min: 0, max: MAX_KEY_PROPAGATION_SECONDS, integer: true });
export function parsePropagationSeconds(text: string): number {
  const parsed = propagationFlag.safeParse(text);
  if (!parsed.success)
    throw new InvalidArgumentError(
      `--propagation-seconds ${parsed.error.issues[0]?.message ?? 'is invalid'} (as rotation.keyPropagationSeconds)`,
    );
  return parsed.data;
}

const FAULT_USAGE = `expected rotate-answer=<shape>[,decoys=N][,seconds=S][,bytes=N][,key-at=start|end] (<shape> one of ${ROTATE_ANSWER_SHAPES.join(', ')}) or rotate-delay=<seconds>`;

/** Tuning a `rotate-answer=<shape>,<name>=<value>` may add, by its flag name. */
const TUNING: Record<string, (value: string) => RotateAnswerTuning> = {
  decoys: (value) => ({ decoys: Number(value) }),
  seconds: (value) => ({ trickleSeconds: Number(value) }),
  bytes: (value) => ({ bytes: Number(value) }),
  'key-at': (value) => ({ keyAt: value as 'start' | 'end' }),
};

/**
 * The rotate-answer fault the `--fault` flags ask for, merged into one (the simulator shapes the
 * one rotate with one fault): `rotate-answer=<shape>` with its tuning, and `rotate-delay=<seconds>`
 * (the new key refused that long). A UsageError for anything else.
 */
export function parseRotateFaults(
  specs: readonly string[] | string | undefined,
): RotateAnswerFault | undefined {
  const list = typeof specs === 'string' ? [specs] : (specs ?? []);
  if (list.length === 0) return undefined;
  let fault: RotateAnswerFault = { shape: 'default' };
  for (const spec of list) {
    const [head = '', ...params] = spec.trim().split(',');
    const [name, value = ''] = head.split('=', 2);
    if (name === 'rotate-delay' && params.length === 0 && /^\d+(\.\d+)?$/.test(value)) {
      fault = { ...fault, delaySeconds: Number(value) };
      continue;
    }
    if (name !== 'rotate-answer' || !isRotateAnswerShape(value))
      throw new UsageError(`--fault ${spec}: ${FAULT_USAGE}`);
    fault = { ...fault, shape: value };
    for (const param of params) {
      const [key = '', setting] = param.split('=', 2);
      const tune = TUNING[key];
      if (tune === undefined || setting === undefined || setting === '')
        throw new UsageError(`--fault ${spec}: unknown or empty "${param}"; ${FAULT_USAGE}`);
      fault = { ...fault, ...tune(setting) };
    }
  }
  try {
    validateFaultRule({ fault: { type: 'rotate-answer', ...fault } });
  } catch (error) {
    throw new UsageError(`--fault ${list.join(' --fault ')}: ${(error as Error).message}`);
  }
  return fault;
}

/** The secret rotated, by name; override with ROTATION_SECRET_ID (a name or an ARN). */
export const DEFAULT_ROTATION_SECRET = 'security-pipeline/vendor-org-key';

interface KeyFacts {
  /** `sha256:` and the first 12 hex digits of the key's SHA-256: enough to tell keys apart. */
  readonly fingerprint: string;
  /** The vendor's own id of the key (its metadata), when it gives one. */
  readonly keyId: string;
  readonly createdAt: string;
  readonly versionId: string;
}

export async function runRotateCommand(
  options: RotateCommandOptions,
  config: PipelineConfig,
): Promise<number> {
  const fault = parseRotateFaults(options.fault);
  const propagationSeconds = options.propagationSeconds ?? config.rotation.keyPropagationSeconds;
  // Rotating cannot be undone: every flag is checked before it, with the rule the scan would apply.
  domainFlag(
    options.checkDomain,
    '--check-domain',
    config.scan.allowSpecialUseDomains,
    'nothing was rotated',
  );
  const secretsManager = await connectSecretsManager(process.env);
  const secretName = process.env.ROTATION_SECRET_ID?.trim() || DEFAULT_ROTATION_SECRET;
  try {
    return await withLocalRun(
      {
        command: COMMAND,
        out: userPath(options.out),
        demo: true,
        logLevel: options.logLevel,
        api: 'scan',
        config,
        rotatedSecret: secretName,
        timing: options.timing,
      },
      async (run) => {
        const { vendor } = run;
        // The rotation function's calls and the scan handlers' secret reads are checked as theirs.
        run.iam.watch(secretsManager.client);
        if (!vendor.label.startsWith('built-in simulator') && secretsManager.ephemeral) {
          throw new UsageError(
            `rotating the real vendor's key into the in-memory stand-in would lose the new key when the command ends: set ${SECRETS_MANAGER_ENDPOINT_VARIABLE} to a Secrets Manager that keeps it`,
          );
        }
        if (fault !== undefined) {
          if (vendor.simulator === undefined)
            throw new UsageError('--fault needs the built-in simulator: unset the vendor URLs');
          vendor.simulator.addFault({ api: 'keys', fault: { type: 'rotate-answer', ...fault } });
        }
        if (vendor.orgUuid === undefined)
          throw new ConfigurationError(ENV.orgUuid, 'is required to rotate the key');
        const { client } = secretsManager;
        const secretId = await ensureSecret(client, secretName, {
          apiKey: vendor.apiKey,
          orgUuid: vendor.orgUuid,
        });
        // Every wait on the vendor over about two seconds says what it waits for.
        const waits = rotationWaits(
          createWaitNotices(process.stdout),
          keyManagementFactory({
            baseUrl: vendor.keysApiUrl,
            allowedOrigins: vendor.allowedOrigins,
            logger: run.logs.logger,
          }),
          (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
          propagationSeconds,
        );
        const { keys } = waits;
        const writer = createSecretWriter(client);
        say(`Vendor: ${vendor.label}\nSecrets: ${secretsManager.label}\nSecret: ${secretId}\n`);
        const before = await keyFacts(writer, keys, secretId);
        say(`Before: key ${describeKey(before)} (secret version ${before.versionId})\n`);

        const events: ApiKeyRotatedDetail[] = [];
        const metrics = createMetricsRecorder();
        const deps: RotationDeps = {
          secrets: writer,
          keys,
          // Kept here rather than sent; checked as the PutEvents the deployed function sends (event-bridge.ts).
          events: {
            publish: async (detail) => {
              await run.iam.check('EventBridgeClient', 'PutEventsCommand', {
                Entries: [
                  {
                    Source: ROTATION_EVENT.source,
                    DetailType: ROTATION_EVENT.detailType,
                    Detail: JSON.stringify(detail),
                  },
                ],
              });
              events.push(detail);
            },
          },
          metrics,
          logger: run.logs.logger,
          clock: () => new Date(),
          sleep: waits.sleep,
          settings: {
            orgUuid: vendor.orgUuid,
            mirrorSecretIds: [],
            ...DEFAULT_ROTATION_SETTINGS,
            newKeyFieldPath: config.rotation.newKeyFieldPath,
            keyPropagationMs: propagationSeconds * 1000,
            // The deployed function's timeout: what the rotate answer and the window may take.
            invocationMs: ROTATION_FUNCTION_TIMEOUT_SECONDS * 1000,
          },
        };
        say(
          `Propagation window: ${propagationSeconds} s (a new key refused that long after the rotate is probed again)\n`,
        );
        const handler = createRotateApiKeyHandler(deps);
        const started = performance.now();
        const rotation = await driveRotation(client, secretId, (request) =>
          waits.step(request.Step, () => runAs('rotate-api-key', () => handler(request))),
        );
        const tookMs = Math.round(performance.now() - started);
        for (const step of rotation.steps) say(`  ${step.step}: ${step.outcome}\n`);
        const record = join(run.out, 'rotation', `rotation-${stamp()}.json`);
        await mkdir(join(run.out, 'rotation'), { recursive: true });
        if (rotation.error !== undefined) {
          const error = rotation.error as Error;
          say(`Rotation ${rotation.token} failed: ${error.name}: ${redactText(error.message)}\n`);
          await writeFile(
            record,
            `${JSON.stringify({ token: rotation.token, steps: rotation.steps, error: error.name, rotateAnswerFault: fault, before }, null, 2)}\n`,
          );
          say(`Record: ${record}\n`);
          return 1;
        }
        const after = await keyFacts(writer, keys, secretId);
        if (metrics.recorded.some((m) => m.name === ROTATION_METRIC.rotateKeyUnchanged)) {
          say(
            'The vendor answered the rotate with the key in use: the key did not change (RotateKeyUnchanged)\n',
          );
        }
        const window = metrics.recorded.find((m) => m.name === ROTATION_METRIC.rotationWindow)?.value;
        say(
          `After:  key ${describeKey(after)} (secret version ${after.versionId})\n` +
            `Rotated in ${tookMs} ms; the vendor held a key AWSCURRENT did not name for ${window === undefined ? 'an unmeasured time' : `${(window * 1000).toFixed(0)} ms`}\n` +
            `Event: ApiKeyRotated for version ${events[0]?.versionId ?? '(none)'}\n`,
        );

        // A dependent: one scan whose key is read from the rotated secret, as the handlers read it.
        const reader = createSecretsManagerReader({ client });
        const scanClient = run.clientsWith(
          credentialProviderFromSecret(reader, secretId, { api: 'scan', apis: VENDOR_APIS }),
        ).scan;
        const scan = await waits.during(`the scan of ${options.checkDomain} with the rotated key`, () =>
          scanOneDomain(run, config, scanClient, options.checkDomain),
        );
        say(
          `Scan of ${options.checkDomain} with the rotated key: ${scan.state}${scan.reason ? `: ${scan.reason}` : ''} (${scan.where})\n`,
        );
        await writeFile(
          record,
          `${JSON.stringify({ token: rotation.token, steps: rotation.steps, before, after, tookMs, windowSeconds: window, event: events[0], scan }, null, 2)}\n`,
        );
        say(`Record: ${record}\n`);
        return scan.state === 'succeeded' ? 0 : 1;
      },
    );
  } finally {
    await secretsManager.close();
  }
}

/** The secret's id; created with the vendor's current key when it does not exist yet. */
async function ensureSecret(
  client: SecretsManagerClient,
  secretId: string,
  value: { apiKey: string; orgUuid: string },
): Promise<string> {
  try {
    const found = await client.send(new DescribeSecretCommand({ SecretId: secretId }));
    return found.ARN ?? secretId;
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
  }
  if (secretId.startsWith('arn:'))
    throw new ConfigurationError('ROTATION_SECRET_ID', `names a secret that does not exist (${secretId})`);
  const created = await client.send(
    new CreateSecretCommand({
      Name: secretId,
      Description: 'Vendor org API key (npm start -- rotate)',
      SecretString: JSON.stringify(value),
    }),
  );
  return created.ARN ?? secretId;
}

function describeKey(facts: KeyFacts): string {
  return `${facts.fingerprint} (${facts.keyId}) created ${facts.createdAt}`;
}

/** A short SHA-256 of the key: tells keys apart on screen without showing any of one. */
export function keyFingerprint(key: string): string {
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 12)}`;
}

/** What may be shown of the current key: its fingerprint, the vendor's metadata, the version. */
async function keyFacts(
  writer: ReturnType<typeof createSecretWriter>,
  keys: ReturnType<typeof keyManagementFactory>,
  secretId: string,
): Promise<KeyFacts> {
  const current = await writer.read(secretId, { stage: STAGE.current });
  if (current === undefined) throw new ConfigurationError(secretId, 'has no AWSCURRENT value');
  const credentials = parseVendorCredentials(current.value, secretId, VENDOR_APIS);
  const orgUuid = credentials.orgUuid;
  if (orgUuid === undefined) throw new ConfigurationError(secretId, 'has no "orgUuid"');
  const vendor = keys(credentials.apiKey, orgUuid);
  try {
    const info = (await vendor.getKeyInfo()).raw;
    // The vendor's text, like any other: a vendor may name a key by the key itself.
    const shown = (value: string) => redactText(value, [credentials.apiKey]);
    const created =
      isRecord(info) && typeof info.created_at === 'string' ? shown(info.created_at) : 'at an unknown time';
    const keyId = isRecord(info) && typeof info.key_id === 'string' ? shown(info.key_id) : 'no key id';
    return {
      fingerprint: keyFingerprint(credentials.apiKey),
      keyId,
      createdAt: created,
      versionId: current.versionId,
    };
  } finally {
    await vendor.close();
  }
}

function stamp(): string {
  return `${new Date().toISOString().replace(/[-:]|\.\d+/g, '')}-${randomBytes(2).toString('hex')}`;
}
