/**
 * Domain-list intake: an S3 "Object Created" event becomes one run of the list state machine.
 *
 * The execution name is derived from the object's identity (bucket, key, version), so S3's
 * at-least-once delivery and EventBridge retries cannot start a second run for the same upload:
 * Step Functions answers ExecutionAlreadyExists and we record a duplicate instead.
 */
import { ExecutionAlreadyExists, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { listExecutionName } from '#core/naming';
import { objectFromS3Event } from '#core/s3-event';
import type { DomainListInput } from '#core/scan/contracts';
import type { VendorLogger } from '#core/vendor/types';

export interface IntakeSettings {
  readonly stateMachineArn: string;
  /** Only keys under this prefix are domain lists. */
  readonly prefix: string;
  readonly suffixes: readonly string[];
  /** When set, events for other buckets are ignored. */
  readonly inputBucket: string | undefined;
}

export interface IntakeDeps {
  readonly sfn: SFNClient;
  readonly logger: VendorLogger;
  readonly settings: IntakeSettings;
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

/** Starts one list run per domain-list object in the event; returns what it did with each. */
export async function startDomainListsFromEvent(deps: IntakeDeps, event: unknown): Promise<IntakeDecision[]> {
  const decisions: IntakeDecision[] = [];
  for (const object of objectFromS3Event(event)) {
    const { bucket, key } = object;
    const reason = ignoreReason(deps.settings, bucket, key);
    if (reason) {
      deps.logger.info('object is not a domain list; ignored', { key, reason });
      decisions.push({ key, action: 'ignored', reason });
      continue;
    }
    const input: DomainListInput = {
      source: {
        type: 's3',
        bucket,
        key,
        ...(object.versionId ? { versionId: object.versionId } : {}),
        ...(object.etag ? { etag: object.etag } : {}),
      },
    };
    const executionName = listExecutionName(input.source);
    try {
      const started = await deps.sfn.send(
        new StartExecutionCommand({
          stateMachineArn: deps.settings.stateMachineArn,
          name: executionName,
          input: JSON.stringify(input),
        }),
      );
      deps.logger.info('domain list run started', { key, executionName });
      decisions.push({ key, action: 'started', executionName, executionArn: started.executionArn ?? '' });
    } catch (error) {
      if (!(error instanceof ExecutionAlreadyExists)) throw error;
      deps.logger.info('domain list run already exists; duplicate event ignored', { key, executionName });
      decisions.push({ key, action: 'duplicate', executionName });
    }
  }
  return decisions;
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
