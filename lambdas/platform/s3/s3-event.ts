/**
 * Reads the objects named by an S3 "object created" event, in either shape S3 delivers it:
 *
 * - EventBridge: `{ source: 'aws.s3', 'detail-type': 'Object Created', detail: { bucket, object } }`
 * - S3 event notifications (Lambda, SQS, SNS): `{ Records: [{ s3: { bucket, object } }] }`
 *
 * Object keys are URL-encoded in BOTH shapes, form style: a space arrives as '+', a real '+' as '%2B',
 * and non-ASCII as percent-encoded UTF-8, so both are decoded with the same function.
 *
 * - Notifications: documented. The S3 User Guide ("Event message structure") says the key is URL encoded,
 *   e.g. "red flower.jpg" becomes "red+flower.jpg".
 * - EventBridge: the S3 User Guide page ("EventBridge event message structure") is silent, but S3 fills
 *   `detail.object.key` the same way. Powertools for AWS Lambda (Python) decodes that field with
 *   `unquote_plus` (`S3EventBridgeNotificationObject.key`), and LocalStack's S3 emulation percent-encodes
 *   the key for EventBridge exactly as for the other destinations.
 *
 * Decoding only "when it looks encoded" is not an option: "a+b.txt" is ambiguous, and a wrong guess reads
 * another object. If this ever proves wrong for EventBridge, only keys holding '+' or '%' are affected.
 */
import * as z from 'zod/mini';
import { InvalidInputError } from '#lambdas/platform/errors';
import { parseWith, validated } from '#lambdas/platform/input/schema';

export interface S3ObjectRef {
  readonly bucket: string;
  /** Decoded: ready for GetObject, never URL-encoded. */
  readonly key: string;
  readonly versionId?: string;
  readonly etag?: string;
  readonly size?: number;
  /** Orders events for the same key (compare as hex strings of equal length). */
  readonly sequencer?: string;
}

// The schemas check only the fields the pipeline reads, and keep the rest (S3 adds fields over
// time). Powertools Parser has schemas for both shapes, but they are built on zod's classic API,
// which would add 443 KiB to the intake and list bundles; these are zod/mini.

const object = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.looseObject(shape, {
    error: (issue) => (issue.input === undefined ? 'is missing' : 'is not an object'),
  });
const nonEmptyString = () =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is missing' : 'must be a string') })
    .check(z.minLength(1, { error: 'is empty' }));
/** Absent, null or empty all mean "not given": the notification docs show versionId null when versioning is off. */
const optionalString = () =>
  z.pipe(
    z.optional(z.nullable(z.string({ error: 'must be a string' }))),
    z.transform((value) => (value === null || value === '' ? undefined : value)),
  );
const optionalSize = () =>
  z.optional(
    z.nullable(
      z.number({ error: 'must be a non-negative integer' }).check(
        z.refine((value) => Number.isSafeInteger(value) && value >= 0, {
          error: 'must be a non-negative integer',
        }),
      ),
    ),
  );
const encodedKey = () =>
  z.pipe(
    nonEmptyString(),
    validated((encoded) => decodeS3EventKey(encoded)),
  );

/** EventBridge: `{ source: 'aws.s3', 'detail-type', detail: { bucket, object } }`. */
const eventBridgeSchema = z.looseObject({
  source: z.literal('aws.s3', {
    error: (issue) => `is ${JSON.stringify(issue.input) ?? 'missing'}; expected "aws.s3"`,
  }),
  'detail-type': z.string({ error: 'must be a string' }),
});
const eventBridgeCreatedSchema = z.looseObject({
  detail: object({
    bucket: object({ name: nonEmptyString() }),
    object: object({
      key: encodedKey(),
      'version-id': optionalString(),
      etag: optionalString(),
      size: optionalSize(),
      sequencer: optionalString(),
    }),
  }),
});

/** Notifications (Lambda, SQS, SNS): `{ Records: [{ eventName, s3: { bucket, object } }] }`. */
const notificationSchema = z.looseObject({
  Records: z.array(
    object({
      eventName: z.optional(z.string({ error: 'must be a string' })),
      s3: z.optional(z.unknown()),
    }),
    { error: 'must be an array' },
  ),
});
const notificationS3Schema = object({
  bucket: object({ name: nonEmptyString() }),
  object: object({
    key: encodedKey(),
    versionId: optionalString(),
    eTag: optionalString(),
    size: optionalSize(),
    sequencer: optionalString(),
  }),
});

/**
 * Returns the created objects an event names. Events for anything other than object creation (deletes,
 * restores, `s3:TestEvent` sent when notifications are configured) name none, so the result is empty.
 *
 * @throws InvalidInputError naming the malformed field, e.g. `Records[0].s3.object.key`
 */
export function objectFromS3Event(event: unknown): S3ObjectRef[] {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new InvalidInputError('event', 'is not an object');
  }
  if ('Records' in event) return fromNotification(event);
  if ('detail' in event || 'detail-type' in event) return fromEventBridge(event);
  if ((event as { Event?: unknown }).Event === 's3:TestEvent') return [];
  throw new InvalidInputError(
    'event',
    'is neither an S3 event notification (Records) nor an EventBridge S3 event (detail)',
  );
}

/** Decodes an S3 event key: '+' is a space, `%XX` is a UTF-8 byte. */
export function decodeS3EventKey(encoded: string, field = 'key'): string {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch {
    throw new InvalidInputError(field, 'is not valid URL encoding');
  }
}

function fromEventBridge(event: object): S3ObjectRef[] {
  const envelope = parseWith(eventBridgeSchema, event);
  if (envelope['detail-type'] !== 'Object Created') return [];
  const { bucket, object: created } = parseWith(eventBridgeCreatedSchema, event).detail;
  return [
    build({
      bucket: bucket.name,
      key: created.key,
      versionId: created['version-id'],
      etag: created.etag,
      size: created.size ?? undefined,
      sequencer: created.sequencer,
    }),
  ];
}

function fromNotification(event: object): S3ObjectRef[] {
  const { Records } = parseWith(notificationSchema, event);
  return Records.flatMap((record, index) => {
    // eventName is "ObjectCreated:Put" etc.; records without one are taken as creations.
    if (record.eventName !== undefined && !record.eventName.startsWith('ObjectCreated:')) return [];
    // Checked only for creations: other records (deletes, restores) may carry any s3 shape.
    if (record.s3 === undefined) throw new InvalidInputError(`Records[${index}].s3`, 'is missing');
    const s3 = parseWith(notificationS3Schema, record.s3, `Records[${index}].s3`);
    return [
      build({
        bucket: s3.bucket.name,
        key: s3.object.key,
        versionId: s3.object.versionId,
        etag: s3.object.eTag,
        size: s3.object.size ?? undefined,
        sequencer: s3.object.sequencer,
      }),
    ];
  });
}

/** Leaves absent optional fields out entirely, so results compare and serialise cleanly. */
function build(fields: {
  bucket: string;
  key: string;
  versionId: string | undefined;
  etag: string | undefined;
  size: number | undefined;
  sequencer: string | undefined;
}): S3ObjectRef {
  const ref: { -readonly [K in keyof S3ObjectRef]: S3ObjectRef[K] } = {
    bucket: fields.bucket,
    key: fields.key,
  };
  if (fields.versionId !== undefined) ref.versionId = fields.versionId;
  if (fields.etag !== undefined) ref.etag = fields.etag;
  if (fields.size !== undefined) ref.size = fields.size;
  if (fields.sequencer !== undefined) ref.sequencer = fields.sequencer;
  return ref;
}
