import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Tracing } from 'aws-cdk-lib/aws-lambda';
import {
  type BundlingOptions,
  LogLevel,
  NodejsFunction,
  type NodejsFunctionProps,
  OutputFormat,
} from 'aws-cdk-lib/aws-lambda-nodejs';
import { DataIdentifier, DataProtectionPolicy, LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { RegisteredHandler } from '#lambdas/platform/handler-declaration';
import { ENV } from '#lambdas/platform/runtime/variables';
import { DEFAULT_PIPELINE_CONFIG } from '../config/defaults.ts';
import type { LambdaRuntimeName } from '../config/schema.ts';
import { functionSettingsOf, LAMBDA_RUNTIME_SETTINGS } from './function-settings.ts';
import { validateEnvironmentSize } from './lambda-environment-size.ts';
import { acknowledge, acknowledgeWildcards } from './nag.ts';
import { pipelineServiceName } from './pipeline-metric.ts';
import { type PrebuiltHandlerCode, prebuiltHandlerCode } from './prebuilt-handlers.ts';
import { type FunctionAlarmOptions, functionAlarms } from './standard-alarms.ts';

/** Repository root: handler entries, package-lock.json and tsconfig.json are resolved against it. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Replaced by the package build (scripts/build-package.ts, esbuild `define`) with the folder, relative
 * to the built entry point, that holds the prebuilt handlers (`<handler>/index.mjs`, the chunks they
 * share and the manifest of each handler's files: prebuilt-handlers.ts).
 * Undeclared when running from this repository's sources, where esbuild bundles at synth instead.
 */
declare const SECURITY_PIPELINE_PREBUILT_HANDLERS: string | undefined;

/** Where the installed package's prebuilt handler bundles are; undefined when running from sources. */
export function prebuiltHandlersDir(): string | undefined {
  return typeof SECURITY_PIPELINE_PREBUILT_HANDLERS === 'string'
    ? fileURLToPath(new URL(SECURITY_PIPELINE_PREBUILT_HANDLERS, import.meta.url))
    : undefined;
}

/** A handler's entry file on disk, from its path in the repository (`lambdas/<workflow>/<name>.ts`). */
export function handlerEntry(entryPath: string): string {
  return join(REPO_ROOT, entryPath);
}

/**
 * Bundling of every function (bench/bundles.ts bundles with exactly these options); a pipeline's
 * `lambdaSourceMaps` turns `sourceMap` on for its functions.
 *
 * Source maps are off by default: they make each asset (and the package, which ships them for the
 * prebuilt handlers) several times larger, and only a stack trace reads them. With the setting on
 * they are built without `sourcesContent`: traces still name the TypeScript file and line, but each
 * asset ships no copy of every source it bundles. Measured by `npm run bench -- bundles` (esbuild
 * 0.28, vendor-calling handler, Node 22, median of 15 fresh processes):
 *
 *   option                    index.mjs   map       zip       import vs empty   trace names TS:line
 *   map + sourcesContent      1033 KiB    4146 KiB  1261 KiB  5.2x              yes
 *   map, no sourcesContent    1033 KiB    1442 KiB   681 KiB  5.2x              yes (the setting on)
 *   no minify, no map         2291 KiB       0       458 KiB  4.8x              no (bundle lines)
 *   minify, map not shipped   1033 KiB       0       323 KiB  4.8x              no (the default)
 *
 * Import ratios moved between 4.8x and 6.0x across runs for every variant on a shared 2-core
 * machine: the map's size does not measurably change import time (the runtime parses it only when a
 * stack is formatted).
 */
export const PIPELINE_BUNDLING: BundlingOptions = {
  sourceMap: false,
  sourcesContent: false,
  minify: true,
  format: OutputFormat.ESM,
  target: LAMBDA_RUNTIME_SETTINGS[DEFAULT_PIPELINE_CONFIG.lambdaRuntime].esbuildTarget,
  mainFields: ['module', 'main'],
  // Bundle the exact AWS SDK version the tests ran against; the runtime's copy drifts.
  bundleAwsSDK: true,
  // Some CommonJS dependencies call require() at runtime; an ESM bundle has none without this.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  // Without it esbuild's CLI logs at info: each bundle's size and time, four lines per function of
  // every `cdk synth`. CDK's own `Bundling asset …` line per function stays: the synth's progress.
  logLevel: LogLevel.ERROR,
};

export interface PipelineFunctionProps {
  /**
   * The handler it runs, as lambdas/registry.ts resolves it (`registeredHandler('start-scan')` for
   * `lambdas/scan/start-scan.ts`): its entry, which must export `handler`, and its declaration.
   */
  readonly handler: RegisteredHandler;
  /** Function timeout (1 s .. 15 min). Required: every caller must think about it. */
  readonly timeout: Duration;
  /**
   * Memory in MB (128 .. 10240). CPU scales with memory.
   * @default 512
   */
  readonly memorySize?: number;
  /**
   * Environment variables. Merged over the defaults (POWERTOOLS_*, NODE_OPTIONS); never dropped.
   * @default - only the defaults
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Retention of the function's log group.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
  /**
   * Reserved concurrency, to protect the vendor or a downstream quota.
   * @default - unreserved
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Human-readable description shown in the console.
   * @default - names the handler file
   */
  readonly description?: string;
  /**
   * The Lambda runtime; the esbuild target of its bundle follows.
   * @default - the `lambdaRuntime` of the pipeline it belongs to, 'nodejs24.x' outside one
   */
  readonly runtime?: LambdaRuntimeName;
  /**
   * Ship source maps and run with `--enable-source-maps` (stack traces name the TypeScript file).
   * @default - the `lambdaSourceMaps` of the pipeline it belongs to, false outside one
   */
  readonly sourceMaps?: boolean;
  /**
   * Powertools service name (`POWERTOOLS_SERVICE_NAME`), and so the `service` dimension of its metrics.
   * @default - the name of the pipeline it belongs to (pipeline-metric.ts), 'security-pipeline' outside one
   */
  readonly serviceName?: string;
  /**
   * Powertools log level (`POWERTOOLS_LOG_LEVEL`).
   * @default 'INFO'
   */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * A CloudWatch Logs data protection policy on its log group that masks email addresses, a second
   * net under the redaction every log line passes (lambdas/platform/redaction/redact.ts).
   * @default - the registry decides: on for handlers that read vendor answers or handle people
   *   (`logsMayCarryPersonalData` of the registered handler)
   */
  readonly maskEmailsInLogs?: boolean;
  /**
   * Its standard alarms' error threshold and runbook.
   * @default 5 errors in 5 minutes, docs/runbooks/alarms.md
   */
  readonly alarms?: FunctionAlarmOptions;
}

/** NODE_OPTIONS: `--enable-source-maps` first when maps are shipped, then the caller's; none when empty. */
function nodeOptions(sourceMaps: boolean, callers: string | undefined): { NODE_OPTIONS?: string } {
  const options = [sourceMaps ? '--enable-source-maps' : undefined, callers].filter(Boolean).join(' ');
  return options === '' ? {} : { NODE_OPTIONS: options };
}

/**
 * Masks email addresses in a log group's events, as a second net under `redactText`: whoever reads
 * the logs without logs:Unmask sees them masked. CloudWatch Logs bills it per GB scanned (see the
 * cost notes in docs/operations.md).
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch-logs-data-protection-policies.html
 */
export function emailMaskingPolicy(what: string): DataProtectionPolicy {
  return new DataProtectionPolicy({
    name: 'mask-email-addresses',
    description: `Masks email addresses in the ${what}: vendor text may echo a person's address`,
    identifiers: [DataIdentifier.EMAILADDRESS],
  });
}

/**
 * The one place for Lambda defaults: the pipeline's `lambdaRuntime` (Node.js 24 unless set) on arm64,
 * explicit memory and timeout, its own log group with retention, active tracing, source maps, ESM
 * bundle, and a role that can write to that log group only (no AWSLambdaBasicExecutionRole with its
 * account-wide `logs:*` on `*`).
 *
 * The runtime is pinned (not "latest"), so a CDK upgrade never moves the functions to a runtime the
 * handlers were not tested on. The handlers use nothing newer than Node.js 22, which the local runner
 * and the test suite run them on.
 */
export class PipelineFunction extends NodejsFunction {
  /** The execution role (created here, so grants stay explicit). */
  public readonly executionRole: Role;
  /** The handler file name this function was built from, e.g. `start-scan`. */
  public readonly handlerFile: string;
  /** The handler it runs, with what it declares it touches (bindings.ts grants exactly that). */
  public readonly registered: RegisteredHandler;
  /** Its standard alarms (lib/platform/standard-alarms.ts). */
  public readonly alarms: { readonly errors: Alarm; readonly throttles: Alarm };

  constructor(scope: Construct, id: string, props: PipelineFunctionProps) {
    const chosen = functionSettingsOf(scope);
    const runtime = LAMBDA_RUNTIME_SETTINGS[props.runtime ?? chosen.runtime];
    const sourceMaps = props.sourceMaps ?? chosen.sourceMaps;
    const code = PipelineFunction.validate(id, props, runtime.esbuildTarget, sourceMaps);
    // Role and log group are created next to the function (not inside it): NodejsFunction needs
    // both at construction time, and `this` is not available before super().
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${props.handler.file} handler`,
    });
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention ?? RetentionDays.THREE_MONTHS,
      ...((props.maskEmailsInLogs ?? props.handler.logsMayCarryPersonalData)
        ? { dataProtectionPolicy: emailMaskingPolicy(`${props.handler.file} logs`) }
        : {}),
    });

    super(scope, id, {
      ...code,
      description: props.description ?? `Security pipeline: ${props.handler.entryPath}`,
      runtime: runtime.runtime,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout,
      role,
      logGroup,
      tracing: Tracing.ACTIVE,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      environment: {
        [ENV.serviceName]: props.serviceName ?? pipelineServiceName(scope),
        [ENV.logLevel]: props.logLevel ?? 'INFO',
        ...props.environment,
        // With maps shipped, stack traces point at the TypeScript sources, whatever else the caller passes.
        ...nodeOptions(sourceMaps, props.environment?.NODE_OPTIONS),
      },
    });

    this.executionRole = role;
    this.handlerFile = props.handler.file;
    this.registered = props.handler;
    logGroup.grantWrite(role);
    this.alarms = functionAlarms(this, props.handler.file, props.alarms);
    validateEnvironmentSize(this);

    acknowledgeWildcards(
      role,
      ['Resource::*'],
      'Tracing.ACTIVE adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions.',
    );
    for (const rule of ['AwsSolutions-L1', 'Serverless-LambdaLatestVersion']) {
      acknowledge(
        this,
        rule,
        "The runtime is the pipeline's lambdaRuntime setting, pinned rather than the latest so that a deploy never changes it unasked.",
      );
    }
  }

  /**
   * Checks the props before anything is created; returns where the code comes from: the installed
   * package's prebuilt bundle (built with PIPELINE_BUNDLING by scripts/build-package.ts), or the
   * handler's source, bundled by esbuild at synth.
   */
  private static validate(
    id: string,
    props: PipelineFunctionProps,
    esbuildTarget: string,
    sourceMaps: boolean,
  ): Pick<
    NodejsFunctionProps,
    'entry' | 'handler' | 'code' | 'projectRoot' | 'depsLockFilePath' | 'bundling'
  > {
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(props.handler.file)) {
      throw new Error(
        `PipelineFunction ${id}: the handler's file must be a kebab-case file name without extension, e.g. 'write-summary' (got '${props.handler.file}')`,
      );
    }
    const prebuilt = prebuiltHandlersDir();
    const entry = prebuilt === undefined ? handlerEntry(props.handler.entryPath) : undefined;
    if (entry !== undefined && !existsSync(entry)) {
      throw new Error(`PipelineFunction ${id}: handler file ${entry} does not exist`);
    }
    const seconds = props.timeout.toSeconds();
    if (seconds < 1 || seconds > Duration.minutes(15).toSeconds()) {
      throw new Error(
        `PipelineFunction ${id}: timeout must be between 1 second and 15 minutes (got ${seconds} s)`,
      );
    }
    const memory = props.memorySize ?? 512;
    if (!Number.isInteger(memory) || memory < 128 || memory > 10_240) {
      throw new Error(
        `PipelineFunction ${id}: memorySize must be a whole number of MB from 128 to 10240 (got ${memory})`,
      );
    }
    if (props.reservedConcurrentExecutions !== undefined && props.reservedConcurrentExecutions < 1) {
      throw new Error(
        `PipelineFunction ${id}: reservedConcurrentExecutions must be at least 1 (got ${props.reservedConcurrentExecutions})`,
      );
    }
    return entry !== undefined
      ? {
          entry,
          handler: 'handler',
          projectRoot: REPO_ROOT,
          depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
          bundling: { ...PIPELINE_BUNDLING, target: esbuildTarget, sourceMap: sourceMaps },
        }
      : PipelineFunction.prebuiltCode(id, prebuilt as string, props.handler.file, sourceMaps);
  }

  private static prebuiltCode(
    id: string,
    dir: string,
    handlerFile: string,
    sourceMaps: boolean,
  ): PrebuiltHandlerCode {
    try {
      return prebuiltHandlerCode(dir, handlerFile, sourceMaps);
    } catch (error) {
      throw new Error(`PipelineFunction ${id}: ${(error as Error).message}`);
    }
  }
}
