/**
 * Resume after a pause: every intake event refused with PipelinePausedError sits in its intake's
 * dead-letter queue as a Lambda on-failure destination record (`requestContext.functionArn`,
 * `requestPayload`, `responsePayload.errorType`). Once the switch says `running`, each such event is
 * given back to the function that refused it (an asynchronous invoke with the original payload)
 * and removed from the queue. Anything else in the queues stays for a human.
 *
 * Safe to run any number of times: a replayed upload or schedule fire gets the execution name it
 * would have had, so one that started after all meets ExecutionAlreadyExists.
 */
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { ERROR_NAME } from '#lambdas/platform/errors';
import { tryJson } from '#lambdas/platform/runs/fan-out-results';
import type { PauseSwitch } from '#lambdas/platform/runs/pause';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';

export interface ResumeDeps {
  readonly sqs: SQSClient;
  readonly lambda: LambdaClient;
  readonly pause: PauseSwitch;
  readonly logger: VendorLogger;
  /** The intake dead-letter queues that hold paused events. */
  readonly queueUrls: readonly string[];
  /** Receive calls per queue and run, so one run stays bounded. @default 100 (1,000 messages) */
  readonly maxBatches?: number;
}

export interface ResumeResult {
  readonly paused: boolean;
  /** Events given back to their intake function. */
  readonly replayed: number;
  /** Other messages seen, left in their queue. */
  readonly left: number;
}

interface HeldStart {
  readonly functionArn: string;
  readonly payload: unknown;
}

/** The held start in a destination record, or undefined when the record is anything else. */
export function heldStartIn(body: string | undefined): HeldStart | undefined {
  const record = tryJson(body ?? '') as
    | {
        requestContext?: { functionArn?: unknown };
        requestPayload?: unknown;
        responsePayload?: { errorType?: unknown };
      }
    | undefined;
  const functionArn = record?.requestContext?.functionArn;
  if (record?.responsePayload?.errorType !== ERROR_NAME.PipelinePausedError) return undefined;
  if (typeof functionArn !== 'string' || !functionArn.startsWith('arn:')) return undefined;
  // Unqualified: the function as deployed now, whatever version refused the event.
  return { functionArn: functionArn.replace(/:\$LATEST$|:\d+$/, ''), payload: record.requestPayload };
}

export async function resumePausedStarts(deps: ResumeDeps): Promise<ResumeResult> {
  if (await deps.pause.isPaused()) {
    deps.logger.info('still paused; nothing resumed', { parameter: deps.pause.parameterName });
    return { paused: true, replayed: 0, left: 0 };
  }
  let replayed = 0;
  let left = 0;
  for (const queueUrl of deps.queueUrls) {
    for (let batch = 0; batch < (deps.maxBatches ?? 100); batch++) {
      const received = await deps.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          // Other messages stay invisible for the rest of this run, then come back for a human.
          VisibilityTimeout: 300,
        }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) break;
      for (const message of messages) {
        const held = heldStartIn(message.Body);
        if (held === undefined) {
          left += 1;
          continue;
        }
        await deps.lambda.send(
          new InvokeCommand({
            FunctionName: held.functionArn,
            InvocationType: 'Event',
            Payload: new TextEncoder().encode(JSON.stringify(held.payload)),
          }),
        );
        await deps.sqs.send(
          new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
        );
        replayed += 1;
      }
    }
  }
  deps.logger.info('paused starts resumed', { replayed, left });
  return { paused: false, replayed, left };
}
