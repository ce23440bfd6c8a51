/**
 * The breach request schema: `{ name, emails[] }`, normalised, with errors that name the offending
 * item by position and never quote an address.
 */
import { describe, expect, it } from 'vitest';
import {
  breachExecutionName,
  breachReportInputSchema,
  parseBreachRequest,
  personRef,
  slugOf,
} from '#lambdas/breach/contracts';
import { breachRunPrefix, reportFolder } from '#lambdas/breach/identity';
import { InvalidInputError } from '#lambdas/platform/errors';
import { parseWith } from '#lambdas/platform/input/schema';
import { REPORT_NAMING_KEY } from './fixture.ts';

const KEY = 'k'.repeat(40);
const tooLongName = 'N'.repeat(201);
const fiftyOne = Array.from({ length: 51 }, (_, i) => `person${i}@example.com`);

/** [label, input, field the error names, words of the reason]. */
const BAD: readonly [string, unknown, string, RegExp][] = [
  ['not an object', 'jane@example.com', 'request', /must be an object/],
  ['null', null, 'request', /must be an object/],
  ['an array', [{ name: 'x' }], 'request', /must be an object/],
  ['a number', 42, 'request', /must be an object/],
  ['no name', { emails: ['a@example.com'] }, 'request.name', /is missing/],
  ['a numeric name', { name: 7, emails: ['a@example.com'] }, 'request.name', /must be a string/],
  ['an empty name', { name: '', emails: ['a@example.com'] }, 'request.name', /is empty/],
  ['a blank name', { name: '   ', emails: ['a@example.com'] }, 'request.name', /is empty/],
  [
    'a name over 200 characters',
    { name: tooLongName, emails: ['a@example.com'] },
    'request.name',
    /longer than 200/,
  ],
  [
    'a name with a newline',
    { name: 'Jane\nDoe', emails: ['a@example.com'] },
    'request.name',
    /control character/,
  ],
  [
    'a name with a NUL',
    { name: 'Jane\u0000', emails: ['a@example.com'] },
    'request.name',
    /control character/,
  ],
  [
    'a name with a C1 control',
    { name: 'Jane\u0085Doe', emails: ['a@example.com'] },
    'request.name',
    /control character/,
  ],
  ['no emails', { name: 'Jane' }, 'request.emails', /is missing/],
  ['emails as a string', { name: 'Jane', emails: 'a@example.com' }, 'request.emails', /array of addresses/],
  [
    'emails as an object',
    { name: 'Jane', emails: { 0: 'a@example.com' } },
    'request.emails',
    /array of addresses/,
  ],
  ['an empty list', { name: 'Jane', emails: [] }, 'request.emails', /at least one address/],
  [
    'a number in the list',
    { name: 'Jane', emails: ['a@example.com', 5] },
    'request.emails[1]',
    /must be a string/,
  ],
  ['null in the list', { name: 'Jane', emails: [null] }, 'request.emails[0]', /must be a string/],
  ['an empty address', { name: 'Jane', emails: [''] }, 'request.emails[0]', /is empty/],
  ['no @', { name: 'Jane', emails: ['a@example.com', 'jane.example.com'] }, 'request.emails[1]', /no '@'/],
  ['two @', { name: 'Jane', emails: ['jane@doe@example.com'] }, 'request.emails[0]', /more than one '@'/],
  ['an empty local part', { name: 'Jane', emails: ['@example.com'] }, 'request.emails[0]', /local part/],
  ['an empty domain part', { name: 'Jane', emails: ['jane@'] }, 'request.emails[0]', /domain part is empty/],
  ['a space inside', { name: 'Jane', emails: ['jane doe@example.com'] }, 'request.emails[0]', /space/],
  [
    'a control character',
    { name: 'Jane', emails: ['jane\u0007@example.com'] },
    'request.emails[0]',
    /control/,
  ],
  [
    'an address literal',
    { name: 'Jane', emails: ['jane@[192.0.2.1]'] },
    'request.emails[0]',
    /address literal/,
  ],
  ['a dot at the start', { name: 'Jane', emails: ['.jane@example.com'] }, 'request.emails[0]', /local part/],
  ['two dots', { name: 'Jane', emails: ['ja..ne@example.com'] }, 'request.emails[0]', /local part/],
  [
    'a domain without a dot',
    { name: 'Jane', emails: ['jane@localhost'] },
    'request.emails[0]',
    /domain part/,
  ],
  [
    'a domain label over 63',
    { name: 'Jane', emails: [`jane@${'a'.repeat(64)}.com`] },
    'request.emails[0]',
    /domain part/,
  ],
  [
    'the third of three bad',
    { name: 'Jane', emails: ['a@example.com', 'b@example.com', 'nope'] },
    'request.emails[2]',
    /no '@'/,
  ],
  [
    '51 distinct addresses',
    { name: 'Jane', emails: fiftyOne },
    'request.emails',
    /51 distinct addresses; at most 50/,
  ],
];

const GOOD: readonly [string, unknown, { name: string; emails: string[]; duplicatesRemoved: number }][] = [
  [
    'one address',
    { name: 'Jane Doe', emails: ['jane@example.com'] },
    { name: 'Jane Doe', emails: ['jane@example.com'], duplicatesRemoved: 0 },
  ],
  [
    'a trimmed name',
    { name: '  Jane Doe  ', emails: ['jane@example.com'] },
    { name: 'Jane Doe', emails: ['jane@example.com'], duplicatesRemoved: 0 },
  ],
  [
    'a trimmed address',
    { name: 'Jane', emails: [' jane@example.com '] },
    { name: 'Jane', emails: ['jane@example.com'], duplicatesRemoved: 0 },
  ],
  [
    'two addresses',
    { name: 'Jane', emails: ['jane@example.com', 'j.doe@example.org'] },
    { name: 'Jane', emails: ['jane@example.com', 'j.doe@example.org'], duplicatesRemoved: 0 },
  ],
  [
    'an exact duplicate',
    { name: 'Jane', emails: ['jane@example.com', 'jane@example.com'] },
    { name: 'Jane', emails: ['jane@example.com'], duplicatesRemoved: 1 },
  ],
  [
    'a duplicate by case',
    { name: 'Jane', emails: ['Jane@Example.com', 'jane@example.COM'] },
    { name: 'Jane', emails: ['Jane@example.com'], duplicatesRemoved: 1 },
  ],
  [
    'three copies',
    { name: 'J', emails: ['a@example.com', 'A@EXAMPLE.COM', 'a@example.com'] },
    { name: 'J', emails: ['a@example.com'], duplicatesRemoved: 2 },
  ],
  [
    'a plus tag',
    { name: 'Jane', emails: ['jane+news@example.com'] },
    { name: 'Jane', emails: ['jane+news@example.com'], duplicatesRemoved: 0 },
  ],
  [
    'a subdomain',
    { name: 'Jane', emails: ['jane@mail.corp.example.com'] },
    { name: 'Jane', emails: ['jane@mail.corp.example.com'], duplicatesRemoved: 0 },
  ],
  [
    'a unicode name',
    { name: 'Zoë Ångström', emails: ['zoe@example.com'] },
    { name: 'Zoë Ångström', emails: ['zoe@example.com'], duplicatesRemoved: 0 },
  ],
  [
    'a CJK name',
    { name: '山田太郎', emails: ['taro@example.jp'] },
    { name: '山田太郎', emails: ['taro@example.jp'], duplicatesRemoved: 0 },
  ],
  [
    'a name of 200 characters',
    { name: 'N'.repeat(200), emails: ['n@example.com'] },
    { name: 'N'.repeat(200), emails: ['n@example.com'], duplicatesRemoved: 0 },
  ],
  [
    'exactly 50 addresses',
    { name: 'Jane', emails: fiftyOne.slice(0, 50) },
    { name: 'Jane', emails: fiftyOne.slice(0, 50), duplicatesRemoved: 0 },
  ],
  [
    '51 given, 50 distinct',
    { name: 'Jane', emails: [...fiftyOne.slice(0, 50), 'PERSON0@example.com'] },
    { name: 'Jane', emails: fiftyOne.slice(0, 50), duplicatesRemoved: 1 },
  ],
  [
    'an apostrophe',
    { name: "Siobhán O'Neill", emails: ["o'neill@example.ie"] },
    { name: "Siobhán O'Neill", emails: ["o'neill@example.ie"], duplicatesRemoved: 0 },
  ],
  [
    'hyphens and digits',
    { name: 'Anne-Marie 2nd', emails: ['am-2@example-mail.com'] },
    { name: 'Anne-Marie 2nd', emails: ['am-2@example-mail.com'], duplicatesRemoved: 0 },
  ],
];

describe('parseBreachRequest', () => {
  it.each(BAD)('refuses %s, naming the field', (_label, input, field, reason) => {
    const error = captureError(() => parseBreachRequest(input));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).input).toBe(field);
    expect((error as InvalidInputError).reason).toMatch(reason);
  });

  it.each(BAD)('never quotes an address or the name when refusing %s', (_label, input) => {
    const message = (captureError(() => parseBreachRequest(input)) as Error).message;
    for (const text of stringsIn(input)) {
      if (text.length > 3) expect(message).not.toContain(text.trim());
    }
  });

  it.each(GOOD)('accepts %s', (_label, input, expected) => {
    expect(parseBreachRequest(input)).toEqual(expected);
  });

  it('takes a configured cap', () => {
    const input = { name: 'Jane', emails: ['a@example.com', 'b@example.com', 'c@example.com'] };
    expect(() => parseBreachRequest(input, { maxEmails: 2 })).toThrow(/3 distinct addresses; at most 2/);
    expect(parseBreachRequest(input, { maxEmails: 3 }).emails).toHaveLength(3);
  });
});

describe('people are named by a keyed hash', () => {
  const jane = { name: 'Jane Doe', emails: ['jane@example.com', 'j.doe@example.org'] };

  it('gives the same id whatever the order or case of the addresses and name', () => {
    const a = personRef(KEY, jane);
    const b = personRef(KEY, { name: 'JANE DOE', emails: ['J.Doe@example.org', 'JANE@example.com'] });
    expect(a).toEqual(b);
    expect(a.id).toMatch(/^[0-9a-f]{64}$/);
    expect(a.slug).toBe('jane-doe');
  });

  it('gives another id under another key, and for another address', () => {
    const id = personRef(KEY, jane).id;
    expect(personRef('x'.repeat(40), jane).id).not.toBe(id);
    expect(personRef(KEY, { ...jane, emails: ['jane@example.com'] }).id).not.toBe(id);
  });

  it('refuses an identity key shorter than 32 bytes', () => {
    expect(() => personRef('short', jane)).toThrow(/at least 32 bytes/);
  });

  it('keeps addresses out of every name it makes', () => {
    const person = personRef(KEY, jane);
    const names = [
      breachRunPrefix(person, 'req-1'),
      breachExecutionName(person, 'req-1'),
      reportFolder('jane-doe_20261120T100000Z_abc123', REPORT_NAMING_KEY),
    ];
    for (const name of names) {
      expect(name).not.toMatch(/jane@|example\.com|j\.doe/i);
    }
    expect(breachExecutionName(person, 'req-1')).toMatch(/^breach-[0-9a-f]{48}$/);
    expect(breachExecutionName(person, 'req-1')).toBe(breachExecutionName(person, 'req-1'));
    expect(breachExecutionName(person, 'req-2')).not.toBe(breachExecutionName(person, 'req-1'));
  });

  it.each([
    ['Jane Doe', 'jane-doe'],
    ['Zoë Ångström', 'zoe-angstrom'],
    ['山田太郎', 'person'],
    ['  --  ', 'person'],
    ['A'.repeat(60), 'a'.repeat(40)],
    ['report/../../etc', 'report-etc'],
  ])('slugs %j as %j', (text, slug) => {
    expect(slugOf(text)).toBe(slug);
  });

  it('validates the execution input: hashes and a slug only', () => {
    const person = personRef(KEY, jane);
    const input = { requestId: 'req-1', person, request: { bucket: 'b', key: 'breach/requests/x.json' } };
    expect(parseWith(breachReportInputSchema, input)).toEqual(input);
    expect(() =>
      parseWith(breachReportInputSchema, { ...input, person: { ...person, slug: 'Jane Doe' } }),
    ).toThrow(/person\.slug: is not a slug/);
    expect(() => parseWith(breachReportInputSchema, { ...input, requestId: 'a b' })).toThrow(/requestId/);
  });
});

function captureError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}
