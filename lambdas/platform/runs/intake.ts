/**
 * Object intake: an S3 "Object Created" event or a schedule fire becomes one run of a workflow's
 * state machine (a domain list, a watchlist). The workflow gives its input schema (`parseInput`),
 * which a schedule fire is checked against; an upload becomes `{ source: { type: 's3', ... } }`.
 *
 * The execution name is derived from the object's identity (bucket, key, version), so S3's
 * at-least-once delivery and EventBridge retries cannot start a second run for the same upload:
 * Step Functions answers ExecutionAlreadyExists and we record a duplicate instead.
 */
import { ExecutionAlreadyExists, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { InvalidInputError } from '#lambdas/platform/errors';
import { listExecutionName, type RunSource } from '#lambdas/platform/runs/naming';
import { type PauseSwitch, refuseWhilePaused } from '#lambdas/platform/runs/pause';
import { objectFromS3Event } from '#lambdas/platform/s3/s3-event';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';

/** What the intake starts a run with: its source, and whatever else the workflow's input holds. */
export interface RunInput {
  readonly source: RunSource;
}

export interface IntakeSettings {
  readonly stateMachineArn: string;
  /** Only keys under this prefix start runs. */
  readonly prefix: string;
  readonly suffixes: readonly string[];
  /** When set, events for other buckets are ignored. */
  readonly inputBucket: string | undefined;
}

export interface IntakeDeps {
  readonly sfn: SFNClient;
  readonly logger: VendorLogger;
  readonly settings: IntakeSettings;
  /** The workflow's input schema: a schedule fire is started only if it passes. */
  readonly parseInput: (event: unknown) => RunInput;
  /** What the workflow's runs start from, as its logs name it: `domain list`, `watchlist`. */
  readonly runKind: string;
  /** While on, nothing starts (see #lambdas/platform/pause). @default never paused */
  readonly pause?: PauseSwitch;
}

export type IntakeDecision =
  | {
      readonly key: string;
      readonly action: 'started';
      readonly executionName: string;
      readonly executionArn: string;
    }
  | { readonly key: string; readonly action: 'duplicate'; readonly executionName: string }
  | { readonly key: string; readonly action: 'ignored'; readonly reason: string };

/** Starts one run per uploaded object in the event that the intake takes; returns what it did with each. */
export async function startUploadedRuns(deps: IntakeDeps, event: unknown): Promise<IntakeDecision[]> {
  const decisions: IntakeDecision[] = [];
  for (const object of objectFromS3Event(event)) {
    const { bucket, key } = object;
    const reason = ignoreReason(deps.settings, bucket, key);
    if (reason) {
      deps.logger.info(`object is not a ${deps.runKind}; ignored`, { key, reason });
      decisions.push({ key, action: 'ignored', reason });
      continue;
    }
    const input: RunInput = {
      source: {
        type: 's3',
        bucket,
        key,
        ...(object.versionId ? { versionId: object.versionId } : {}),
        ...(object.etag ? { etag: object.etag } : {}),
      },
    };
    decisions.push(await startRun(deps, input, key));
  }
  return decisions;
}

/**
 * Starts the run of one schedule fire. EventBridge Scheduler invokes this function rather than
 * StartExecution, which it cannot give an execution name (and `<aws.scheduler.scheduled-time>`
 * contains ':', which names forbid): the name hashes schedule name and scheduled time, so a
 * Scheduler retry after a lost response meets the run it already started instead of a second one.
 */
export async function startScheduledRun(deps: IntakeDeps, event: unknown): Promise<IntakeDecision> {
  const input = deps.parseInput(event);
  if (input.source.type !== 'schedule') {
    throw new InvalidInputError('source.type', 'must be schedule for a scheduled start');
  }
  return startRun(deps, input, `schedule ${input.source.scheduleName}`);
}

/** A Scheduler fire (`{ source: { type: 'schedule', ... } }`) or else an S3 event. */
export async function startRuns(deps: IntakeDeps, event: unknown): Promise<IntakeDecision[]> {
  // Before anything else: a paused intake must fail, so that Lambda keeps the event for resume.
  await refuseWhilePaused(deps.pause);
  const source =
    typeof event === 'object' && event !== null ? (event as { source?: unknown }).source : undefined;
  const scheduled =
    typeof source === 'object' && source !== null && (source as { type?: unknown }).type === 'schedule';
  return scheduled ? [await startScheduledRun(deps, event)] : startUploadedRuns(deps, event);
}

async function startRun(deps: IntakeDeps, input: RunInput, key: string): Promise<IntakeDecision> {
  const executionName = listExecutionName(input.source);
  try {
    const started = await deps.sfn.send(
      new StartExecutionCommand({
        stateMachineArn: deps.settings.stateMachineArn,
        name: executionName,
        input: JSON.stringify(input),
      }),
    );
    deps.logger.info(`${deps.runKind} run started`, { key, executionName });
    return { key, action: 'started', executionName, executionArn: started.executionArn ?? '' };
  } catch (error) {
    if (!(error instanceof ExecutionAlreadyExists)) throw error;
    deps.logger.info(`${deps.runKind} run already exists; duplicate ignored`, { key, executionName });
    return { key, action: 'duplicate', executionName };
  }
}

function ignoreReason(settings: IntakeSettings, bucket: string, key: string): string | undefined {
  if (settings.inputBucket !== undefined && bucket !== settings.inputBucket) return 'not the input bucket';
  if (!key.startsWith(settings.prefix)) return `not under ${settings.prefix}`;
  if (key.endsWith('/')) return 'a folder marker';
  const lower = key.toLowerCase();
  if (!settings.suffixes.some((suffix) => lower.endsWith(suffix))) {
    return `does not end with ${settings.suffixes.join(' or ')}`;
  }
  return undefined;
}
