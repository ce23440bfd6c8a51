/**
 * ScanDomain's releasable wait, locally: `WaitForScan` is a callback task (the aws-sdk S3
 * putObject `.waitForTaskToken` integration) that aws-local-stepfunctions cannot run, so the runner
 * binds it to {@link waitForScanTask}, which does what Step Functions does: writes the waiting
 * record to the embedded S3 with the real S3 client, then waits for a SendTaskSuccess with its task
 * token or for its heartbeat timeout (the planned wait, scaled like any other local wait), and
 * answers as AWS would: the watcher's output, or the `States.HeartbeatTimeout` error its Catch takes.
 * It then removes the record (see waitForScanTask).
 *
 * {@link LocalTaskTokens} stands in for Step Functions' task-token API: a real SFNClient (so the IAM
 * evaluator sees its calls) whose SendTaskSuccess is answered in-process, with the errors AWS gives
 * for a token no task waits on. {@link startLocalEarlyEndWatch} runs the real watcher core on a
 * scaled tick for the duration of a run.
 *
 * The engine keeps one context per execution, so `$$.Task.Token` is one token per execution (AWS
 * makes one per task entered): a record of an earlier wait of the same execution would release the
 * current one, which is harmless, since the watcher only releases a scan that has ended.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { PipelineLogger } from '#lambdas/platform/runtime/logger';
import type { ScanApi } from '#lambdas/scan/deps';
import {
  EARLY_END_CONCURRENCY,
  EARLY_END_SCHEDULE,
  type EarlyEndSchedule,
  watchEarlyEndsOnce,
} from '#lambdas/scan/early-end-watch';
import { parseWaitingKey } from '#lambdas/scan/waiting-records';
import { runAs } from '../services/iam/attribution.ts';
import type { JSONValue, TaskHandler } from './task-binding.ts';

/** The state ScanDomain waits in. */
export const WAIT_STATE = 'WaitForScan';
/** What Step Functions reports when a task's heartbeat timeout passes (the planned wait elapsed). */
export const HEARTBEAT_TIMEOUT_ERROR = 'States.HeartbeatTimeout';

/** An SFN service error, shaped like the SDK's (its name is the error code). */
class TaskTokenError extends Error {
  readonly $fault = 'client' as const;
  readonly $metadata = { httpStatusCode: 400, attempts: 1, totalRetryDelay: 0 };
  constructor(name: 'TaskTimedOut' | 'InvalidToken', message: string) {
    super(message);
    this.name = name;
  }
}

/** Step Functions' task tokens for local executions: which task waits on which token. */
export class LocalTaskTokens {
  private readonly waiting = new Map<string, (output: unknown) => void>();
  /** A real SFNClient whose SendTaskSuccess never leaves the process. */
  readonly client: SFNClient;

  constructor() {
    this.client = new SFNClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    this.client.middlewareStack.add(
      (_next, context) => async (args) => {
        if (context.commandName !== 'SendTaskSuccessCommand') {
          throw new Error(`the local task tokens answer SendTaskSuccess only, not ${context.commandName}`);
        }
        const input = args.input as { taskToken?: string; output?: string };
        this.succeed(String(input.taskToken ?? ''), String(input.output ?? ''));
        return { output: { $metadata: {} }, response: {} } as never;
      },
      { step: 'serialize', name: 'localTaskTokens', priority: 'high' },
    );
  }

  /** A fresh token, for one execution's context (`$$.Task.Token`). */
  static newToken(): string {
    return `local-task-${randomUUID()}`;
  }

  /** Ends the task waiting on `token` with `output`, or fails as SendTaskSuccess does. */
  succeed(token: string, output: string): void {
    if (!token.startsWith('local-task-')) throw new TaskTokenError('InvalidToken', 'Invalid Token');
    const resolve = this.waiting.get(token);
    if (!resolve) throw new TaskTokenError('TaskTimedOut', 'Task Timed Out');
    let parsed: unknown;
    try {
      parsed = JSON.parse(output);
    } catch {
      const error = new Error('Invalid Output');
      error.name = 'InvalidOutput';
      throw error;
    }
    this.waiting.delete(token);
    resolve(parsed);
  }

  /** Waits on `token` until SendTaskSuccess (its output) or `ms` (undefined), or until `stop`. */
  async waitOn(token: string, ms: number, stop?: AbortSignal): Promise<{ output: unknown } | undefined> {
    const released = new Promise<{ output: unknown }>((resolve) => {
      this.waiting.set(token, (output) => resolve({ output }));
    });
    const elapsed = delay(ms, undefined, stop ? { signal: stop } : {}).then(
      () => undefined,
      () => undefined,
    );
    try {
      return await Promise.race([released, elapsed]);
    } finally {
      this.waiting.delete(token);
    }
  }
}

/**
 * The local `WaitForScan`: writes the waiting record the definition's Parameters built (its Key and
 * Body, in the local results bucket), then waits as {@link LocalTaskTokens.waitOn} says. The
 * heartbeat timeout is the key's planned wait, or `waitOverrideMs` when waits are scaled.
 */
export function waitForScanTask(options: {
  readonly s3: S3Client;
  readonly resultsBucket: string;
  readonly tokens: LocalTaskTokens;
  readonly waitOverrideMs?: number;
}): TaskHandler {
  return async (input) => {
    const { Key, Body } = input as { Key?: unknown; Body?: unknown };
    const record = typeof Key === 'string' ? parseWaitingKey(Key) : undefined;
    if (record?.kind !== 'wait' || typeof Key !== 'string' || typeof Body !== 'string') {
      throw new Error(`${WAIT_STATE}: the definition's Parameters gave no waiting record key and token`);
    }
    // As the state machine's role: the evaluator checks calls made inside a handler only.
    await options.s3.send(new PutObjectCommand({ Bucket: options.resultsBucket, Key, Body }));
    const ms = options.waitOverrideMs ?? record.waitSeconds * 1000;
    const released = await options.tokens.waitOn(Body, ms);
    // A local run ends with its executions, so no later watcher pass would remove the record of
    // the last wait (in AWS the next check does): the runner removes it when the wait ends.
    await options.s3.send(new DeleteObjectCommand({ Bucket: options.resultsBucket, Key }));
    if (released === undefined) {
      const error = new Error(`${WAIT_STATE} heartbeat timed out after ${record.waitSeconds} s`);
      error.name = HEARTBEAT_TIMEOUT_ERROR;
      throw error;
    }
    return released.output as JSONValue;
  };
}

/**
 * The watcher's schedule with every duration scaled so that a pass comes every `tickMs` (the
 * promise keeps its shape: the same fraction of the age, the minimum gap scaled alike).
 */
export function scaledSchedule(tickMs: number): EarlyEndSchedule {
  const scale = tickMs / 1000 / EARLY_END_SCHEDULE.passIntervalSeconds;
  return {
    minGapSeconds: EARLY_END_SCHEDULE.minGapSeconds * scale,
    gapFraction: EARLY_END_SCHEDULE.gapFraction,
    passIntervalSeconds: EARLY_END_SCHEDULE.passIntervalSeconds * scale,
    releaseMarginSeconds: EARLY_END_SCHEDULE.releaseMarginSeconds * scale,
  };
}

/**
 * The local watcher's tick: every 30 s when waits are real (the deployed pace of its passes), half
 * a scaled wait when they are scaled (a pass between two waits, as in AWS), none when waits take
 * no time (nothing could be released early).
 */
export function earlyEndTickMs(waitOverrideMs: number | undefined): number | undefined {
  if (waitOverrideMs === undefined) return EARLY_END_SCHEDULE.passIntervalSeconds * 1000;
  if (waitOverrideMs <= 0) return undefined;
  return Math.max(MIN_LOCAL_TICK_MS, Math.floor(waitOverrideMs / 2));
}
/** A scaled tick never comes faster than this: each pass lists the waiting records. */
const MIN_LOCAL_TICK_MS = 20;

export interface LocalEarlyEndWatch {
  /** Passes made so far. */
  passes(): number;
  /** Stops ticking and waits for the pass under way. */
  stop(): Promise<void>;
}

/**
 * Runs the real watcher core every `tickMs` until stopped, as the poll function does (so
 * the IAM evaluator checks its calls against that function's synthesized policy). A pass that
 * throws is logged and the next tick runs, as the next scheduled invocation would.
 */
export function startLocalEarlyEndWatch(options: {
  readonly s3: S3Client;
  readonly resultsBucket: string;
  readonly scanClient: Pick<ScanApi, 'getStatus'>;
  readonly tokens: LocalTaskTokens;
  readonly logger: PipelineLogger;
  readonly tickMs: number;
  /** Wraps the SFN client, e.g. with the IAM evaluator's check. */
  readonly watchClient?: <C extends SFNClient>(client: C) => C;
  /**
   * The watcher's clock and schedule, for a test whose handlers run on a clock of its own.
   * @default the real clock and {@link scaledSchedule}(tickMs)
   */
  readonly clock?: () => Date;
  readonly schedule?: EarlyEndSchedule;
}): LocalEarlyEndWatch {
  const schedule = options.schedule ?? scaledSchedule(options.tickMs);
  const clock = options.clock ?? (() => new Date());
  const sfn = options.watchClient ? options.watchClient(options.tokens.client) : options.tokens.client;
  let passes = 0;
  let stopped = false;
  const stopping = new AbortController();
  const loop = (async () => {
    while (!stopped) {
      try {
        await runAs('poll-scan-status', () =>
          watchEarlyEndsOnce(
            {
              s3: options.s3,
              bucket: options.resultsBucket,
              scanClient: options.scanClient,
              sfn,
              logger: options.logger,
              clock,
              sleep: (ms) => delay(ms).then(() => {}),
              schedule,
              concurrency: EARLY_END_CONCURRENCY,
              timeBudgetMs: schedule.passIntervalSeconds * 10_000,
              passes: 1,
            },
            clock().getTime() + schedule.passIntervalSeconds * 10_000,
          ),
        );
      } catch (error) {
        options.logger.warn('Early-end watch pass failed; the next tick runs anyway', {
          error: (error as Error).name,
          message: (error as Error).message,
        });
      }
      passes += 1;
      if (!stopped) await delay(options.tickMs, undefined, { signal: stopping.signal }).catch(() => {});
    }
  })();
  return {
    passes: () => passes,
    stop: async () => {
      stopped = true;
      stopping.abort();
      await loop;
    },
  };
}
