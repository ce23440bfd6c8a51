import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#lambdas/platform/errors';
import { decodeS3EventKey, objectFromS3Event } from '#lambdas/platform/s3/s3-event';
import { thrownBy } from '../kit/errors.ts';
import { objectCreatedEvent } from '../kit/s3-events.ts';

function notificationRecord(object: Record<string, unknown>, eventName = 'ObjectCreated:Put') {
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: 'eu-west-1',
    eventTime: '2026-11-02T10:00:00.000Z',
    eventName,
    userIdentity: { principalId: 'AWS:EXAMPLE' },
    requestParameters: { sourceIPAddress: '192.0.2.1' },
    responseElements: { 'x-amz-request-id': 'C3D13FE58DE4C810', 'x-amz-id-2': 'FMyUVURIY8' },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: 'intake',
      bucket: {
        name: 'input-bucket',
        ownerIdentity: { principalId: 'EXAMPLE' },
        arn: 'arn:aws:s3:::input-bucket',
      },
      object,
    },
  };
}

/** [decoded key, as S3 encodes it in the event]: form-style, '+' for space, '%2B' for a real plus. */
const encodedKeys: [string, string][] = [
  ['incoming/list.txt', 'incoming/list.txt'],
  ['incoming/my domains.txt', 'incoming/my+domains.txt'],
  ['incoming/c++ list.txt', 'incoming/c%2B%2B+list.txt'],
  ['incoming/a+b.txt', 'incoming/a%2Bb.txt'],
  ['incoming/100% done.txt', 'incoming/100%25+done.txt'],
  ['incoming/%41 literal.txt', 'incoming/%2541+literal.txt'],
  ['incoming/bücher liste.txt', 'incoming/b%C3%BCcher+liste.txt'],
  ['incoming/日本.txt', 'incoming/%E6%97%A5%E6%9C%AC.txt'],
  ['incoming/😀.csv', 'incoming/%F0%9F%98%80.csv'],
  ['incoming/a=b;c:d.txt', 'incoming/a%3Db%3Bc%3Ad.txt'],
  ['incoming/(1) copy.txt', 'incoming/%281%29+copy.txt'],
  ['incoming/two  spaces.txt', 'incoming/two++spaces.txt'],
];

describe('objectFromS3Event with an EventBridge "Object Created" event', () => {
  it('returns the bucket, decoded key, version id, ETag, size and sequencer', () => {
    // Prepare
    const event = objectCreatedEvent({
      key: 'incoming/team-a.txt',
      size: 1024,
      etag: 'b1946ac92492d2347c6235b4d2611184',
      'version-id': 'IYV3p45BT0ac8hjHg1houSdS1a.Mro8e',
      sequencer: '617f08299329d189',
    });

    // Act
    const objects = objectFromS3Event(event);

    // Assess
    expect(objects).toEqual([
      {
        bucket: 'input-bucket',
        key: 'incoming/team-a.txt',
        versionId: 'IYV3p45BT0ac8hjHg1houSdS1a.Mro8e',
        etag: 'b1946ac92492d2347c6235b4d2611184',
        size: 1024,
        sequencer: '617f08299329d189',
      },
    ]);
  });

  it('leaves out optional fields the event does not carry', () => {
    // Act
    const [object] = objectFromS3Event(objectCreatedEvent({ key: 'incoming/x.txt' }));

    // Assess
    expect(object).toStrictEqual({ bucket: 'input-bucket', key: 'incoming/x.txt' });
  });

  it.each(encodedKeys)('decodes the key %j from %j', (decoded, encoded) => {
    const [object] = objectFromS3Event(objectCreatedEvent({ key: encoded, size: 1 }));
    expect(object?.key).toBe(decoded);
  });

  it.each(['Object Deleted', 'Object Restore Completed', 'Object Tags Added'])(
    'names no object for a %s event',
    (detailType) => {
      expect(
        objectFromS3Event(objectCreatedEvent({ key: 'x' }, { overrides: { 'detail-type': detailType } })),
      ).toEqual([]);
    },
  );
});

describe('objectFromS3Event with an S3 event notification', () => {
  it('returns every created object with its decoded key', () => {
    // Prepare
    const event = {
      Records: [
        notificationRecord({
          key: 'incoming/my+list.txt',
          size: 42,
          eTag: '0123456789abcdef0123456789abcdef',
          versionId: '096fKKXTRTtl3on89fVO.nfljtsv6qko',
          sequencer: '0A1B2C3D4E5F678901',
        }),
        notificationRecord({
          key: 'incoming/second.csv',
          size: 7,
          eTag: 'ffff',
          sequencer: '0A1B2C3D4E5F678902',
        }),
      ],
    };

    // Act
    const objects = objectFromS3Event(event);

    // Assess
    expect(objects).toEqual([
      {
        bucket: 'input-bucket',
        key: 'incoming/my list.txt',
        versionId: '096fKKXTRTtl3on89fVO.nfljtsv6qko',
        etag: '0123456789abcdef0123456789abcdef',
        size: 42,
        sequencer: '0A1B2C3D4E5F678901',
      },
      {
        bucket: 'input-bucket',
        key: 'incoming/second.csv',
        etag: 'ffff',
        size: 7,
        sequencer: '0A1B2C3D4E5F678902',
      },
    ]);
  });

  it.each(encodedKeys)('decodes the key %j from %j', (decoded, encoded) => {
    const [object] = objectFromS3Event({ Records: [notificationRecord({ key: encoded, size: 1 })] });
    expect(object?.key).toBe(decoded);
  });

  it('treats a null version id (unversioned bucket) as absent', () => {
    const [object] = objectFromS3Event({ Records: [notificationRecord({ key: 'k', versionId: null })] });
    expect(object).toStrictEqual({ bucket: 'input-bucket', key: 'k' });
  });

  it('skips records that are not object creations', () => {
    // Prepare
    const event = {
      Records: [
        notificationRecord({ key: 'deleted.txt' }, 'ObjectRemoved:Delete'),
        notificationRecord({ key: 'created.txt' }, 'ObjectCreated:CompleteMultipartUpload'),
        notificationRecord({ key: 'restored.txt' }, 'ObjectRestore:Completed'),
      ],
    };

    // Act
    const objects = objectFromS3Event(event);

    // Assess
    expect(objects.map((o) => o.key)).toEqual(['created.txt']);
  });

  it('names no object for an empty Records array or the s3:TestEvent sent on configuration', () => {
    expect(objectFromS3Event({ Records: [] })).toEqual([]);
    expect(
      objectFromS3Event({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: 'input-bucket' }),
    ).toEqual([]);
  });
});

describe('objectFromS3Event with a malformed event', () => {
  const good = notificationRecord({ key: 'ok.txt' });

  it.each<[string, unknown, string, string]>([
    ['null', null, 'event', 'is not an object'],
    ['an array', [good], 'event', 'is not an object'],
    ['a string', '{"Records":[]}', 'event', 'is not an object'],
    ['an unrelated object', { hello: 'world' }, 'event', 'is neither'],
    ['Records that is not an array', { Records: 'x' }, 'Records', 'must be an array'],
    ['a null record', { Records: [good, null] }, 'Records[1]', 'is not an object'],
    ['a record without s3', { Records: [{ eventName: 'ObjectCreated:Put' }] }, 'Records[0].s3', 'is missing'],
    [
      'a non-string eventName',
      { Records: [{ ...good, eventName: 5 }] },
      'Records[0].eventName',
      'must be a string',
    ],
    [
      'a record without bucket name',
      { Records: [{ ...good, s3: { ...good.s3, bucket: {} } }] },
      'Records[0].s3.bucket.name',
      'is missing',
    ],
    [
      'a numeric key',
      { Records: [notificationRecord({ key: 12 })] },
      'Records[0].s3.object.key',
      'must be a string',
    ],
    ['an empty key', { Records: [notificationRecord({ key: '' })] }, 'Records[0].s3.object.key', 'is empty'],
    [
      'a key with broken percent-encoding',
      { Records: [notificationRecord({ key: 'bad%E0%A4%A.txt' })] },
      'Records[0].s3.object.key',
      'is not valid URL encoding',
    ],
    [
      'a negative size',
      { Records: [good, notificationRecord({ key: 'k', size: -1 })] },
      'Records[1].s3.object.size',
      'must be a non-negative integer',
    ],
    [
      'a numeric ETag',
      { Records: [notificationRecord({ key: 'k', eTag: 5 })] },
      'Records[0].s3.object.eTag',
      'must be a string',
    ],
    [
      'an EventBridge event from another source',
      objectCreatedEvent({ key: 'k' }, { overrides: { source: 'aws.ec2' } }),
      'source',
      'expected "aws.s3"',
    ],
    [
      'an EventBridge event without detail-type',
      objectCreatedEvent({ key: 'k' }, { overrides: { 'detail-type': undefined } }),
      'detail-type',
      'must be a string',
    ],
    [
      'an EventBridge event without detail',
      objectCreatedEvent({ key: 'k' }, { overrides: { detail: undefined } }),
      'detail',
      'is missing',
    ],
    ['an EventBridge event without key', objectCreatedEvent({ size: 1 }), 'detail.object.key', 'is missing'],
    [
      'an EventBridge event with an empty bucket name',
      objectCreatedEvent(
        { key: 'k' },
        { overrides: { detail: { bucket: { name: '' }, object: { key: 'k' } } } },
      ),
      'detail.bucket.name',
      'is empty',
    ],
    [
      'an EventBridge event with a numeric version id',
      objectCreatedEvent({ key: 'k', 'version-id': 3 }),
      'detail.object.version-id',
      'must be a string',
    ],
    [
      'an EventBridge event with a fractional size',
      objectCreatedEvent({ key: 'k', size: 1.5 }),
      'detail.object.size',
      'must be a non-negative integer',
    ],
    [
      'an EventBridge key with a lone percent sign',
      objectCreatedEvent({ key: '100%.txt' }),
      'detail.object.key',
      'is not valid URL encoding',
    ],
  ])('rejects %s, naming the field', (_case, event, field, reason) => {
    // Act
    const error = thrownBy(InvalidInputError, () => objectFromS3Event(event));

    // Assess
    expect(error.input).toBe(field);
    expect(error.reason).toContain(reason);
  });
});

describe('decodeS3EventKey', () => {
  it('is the inverse of form-style encoding for any key', () => {
    // Prepare
    const keys = ['a b+c%d/é/😀', ' leading', 'trailing ', '+++', '%%', "!*'();:@&=+$,/?#[]"];

    // Act / Assess
    for (const key of keys) {
      const encoded = encodeURIComponent(key).replace(/%20/g, '+');
      expect(decodeS3EventKey(encoded)).toBe(key);
    }
  });
});
