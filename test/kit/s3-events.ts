/**
 * S3 "Object Created" as EventBridge delivers it to the intake rule's target, with every field
 * AWS sends (https://docs.aws.amazon.com/AmazonS3/latest/userguide/ev-events.html): the handlers
 * must take the real shape, not a trimmed one.
 */
export function objectCreatedEvent(
  object: Record<string, unknown>,
  options: { readonly bucket?: string; readonly overrides?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const bucket = options.bucket ?? 'input-bucket';
  return {
    version: '0',
    id: '17793124-05d4-b198-2fde-7ededc63b103',
    'detail-type': 'Object Created',
    source: 'aws.s3',
    account: '111122223333',
    time: '2026-11-02T10:00:00Z',
    region: 'eu-west-1',
    resources: [`arn:aws:s3:::${bucket}`],
    detail: {
      version: '0',
      bucket: { name: bucket },
      object,
      'request-id': 'N4N7GDK58NMKJ12R',
      requester: '111122223333',
      'source-ip-address': '192.0.2.1',
      reason: 'PutObject',
    },
    ...options.overrides,
  };
}

/** An upload of `key` (version `versionId`) to the input bucket the intake tests use. */
export function uploadEvent(key: string, versionId = 'v1', bucket = 'input'): Record<string, unknown> {
  return objectCreatedEvent(
    { key, size: 10, etag: 'e', 'version-id': versionId, sequencer: '01' },
    { bucket },
  );
}
