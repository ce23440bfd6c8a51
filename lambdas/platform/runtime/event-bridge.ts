/** Putting the pipeline's events on EventBridge: one entry, and a rejected entry is an error. */
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { RUN_EVENT_SOURCE, type RunEventPublisher } from '#lambdas/platform/runs/run-events';

export async function putEvent(
  client: EventBridgeClient,
  event: { source: string; detailType: string; detail: object; busName?: string | undefined },
): Promise<void> {
  const out = await client.send(
    new PutEventsCommand({
      Entries: [
        {
          Source: event.source,
          DetailType: event.detailType,
          Detail: JSON.stringify(event.detail),
          ...(event.busName === undefined ? {} : { EventBusName: event.busName }),
        },
      ],
    }),
  );
  if ((out.FailedEntryCount ?? 0) > 0) {
    const code = out.Entries?.[0]?.ErrorCode ?? 'unknown';
    throw Object.assign(new Error(`EventBridge refused ${event.detailType} (${code})`), {
      name: 'EventRejected',
    });
  }
}

/** Run-finished events on the default bus, as `detailType` (the workflow's `RunEventName.detailType`). */
export function eventBridgeRunEvents(client: EventBridgeClient, detailType: string): RunEventPublisher {
  return {
    runFinished: (detail) => putEvent(client, { source: RUN_EVENT_SOURCE, detailType, detail }),
  };
}
