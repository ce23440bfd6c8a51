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
import { InvalidInputError } from '#core/errors';

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

type Json = Record<string, unknown>;

/**
 * Returns the created objects an event names. Events for anything other than object creation (deletes,
 * restores, `s3:TestEvent` sent when notifications are configured) name none, so the result is empty.
 *
 * @throws InvalidInputError naming the malformed field, e.g. `Records[0].s3.object.key`
 */
export function objectFromS3Event(event: unknown): S3ObjectRef[] {
  if (!isObject(event)) throw new InvalidInputError('event', 'is not an object');
  if ('Records' in event) return fromNotification(event);
  if ('detail' in event || 'detail-type' in event) return fromEventBridge(event);
  if (event.Event === 's3:TestEvent') return [];
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

function fromEventBridge(event: Json): S3ObjectRef[] {
  if (event.source !== 'aws.s3') {
    throw new InvalidInputError(
      'source',
      `is ${JSON.stringify(event.source) ?? 'missing'}; expected "aws.s3"`,
    );
  }
  const detailType = event['detail-type'];
  if (typeof detailType !== 'string') throw new InvalidInputError('detail-type', 'must be a string');
  if (detailType !== 'Object Created') return [];

  const detail = objectAt(event.detail, 'detail');
  const bucket = objectAt(detail.bucket, 'detail.bucket');
  const object = objectAt(detail.object, 'detail.object');
  return [
    build({
      bucket: nonEmptyString(bucket.name, 'detail.bucket.name'),
      key: decodeS3EventKey(nonEmptyString(object.key, 'detail.object.key'), 'detail.object.key'),
      versionId: optionalString(object['version-id'], 'detail.object.version-id'),
      etag: optionalString(object.etag, 'detail.object.etag'),
      size: optionalSize(object.size, 'detail.object.size'),
      sequencer: optionalString(object.sequencer, 'detail.object.sequencer'),
    }),
  ];
}

function fromNotification(event: Json): S3ObjectRef[] {
  const records = event.Records;
  if (!Array.isArray(records)) throw new InvalidInputError('Records', 'must be an array');
  const out: S3ObjectRef[] = [];
  records.forEach((value: unknown, index) => {
    const at = `Records[${index}]`;
    const record = objectAt(value, at);
    const eventName = record.eventName;
    if (eventName !== undefined && typeof eventName !== 'string') {
      throw new InvalidInputError(`${at}.eventName`, 'must be a string');
    }
    // eventName is "ObjectCreated:Put" etc.; records without one are taken as creations.
    if (eventName !== undefined && !eventName.startsWith('ObjectCreated:')) return;
    const s3 = objectAt(record.s3, `${at}.s3`);
    const bucket = objectAt(s3.bucket, `${at}.s3.bucket`);
    const object = objectAt(s3.object, `${at}.s3.object`);
    out.push(
      build({
        bucket: nonEmptyString(bucket.name, `${at}.s3.bucket.name`),
        key: decodeS3EventKey(nonEmptyString(object.key, `${at}.s3.object.key`), `${at}.s3.object.key`),
        versionId: optionalString(object.versionId, `${at}.s3.object.versionId`),
        etag: optionalString(object.eTag, `${at}.s3.object.eTag`),
        size: optionalSize(object.size, `${at}.s3.object.size`),
        sequencer: optionalString(object.sequencer, `${at}.s3.object.sequencer`),
      }),
    );
  });
  return out;
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

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectAt(value: unknown, field: string): Json {
  if (!isObject(value)) {
    throw new InvalidInputError(field, value === undefined ? 'is missing' : 'is not an object');
  }
  return value;
}

function nonEmptyString(value: unknown, field: string): string {
  if (value === undefined) throw new InvalidInputError(field, 'is missing');
  if (typeof value !== 'string') throw new InvalidInputError(field, 'must be a string');
  if (value === '') throw new InvalidInputError(field, 'is empty');
  return value;
}

/** Absent, null or empty all mean "not given": the notification docs show versionId null when versioning is off. */
function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new InvalidInputError(field, 'must be a string');
  return value;
}

function optionalSize(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidInputError(field, 'must be a non-negative integer');
  }
  return value;
}
