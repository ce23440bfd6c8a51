import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#lambdas/platform/errors';
import { scanOutputPrefix } from '#lambdas/scan/output-prefix';

describe('scanOutputPrefix', () => {
  const uuid = '123e4567-e89b-12d3-a456-426614174000';

  it.each([
    [
      'a UTC date',
      '2026-11-02T10:00:00Z',
      'scans/example.com/2026/11/02/123e4567-e89b-12d3-a456-426614174000/',
    ],
    [
      "the UTC day, not the day in the timestamp's own offset",
      '2026-12-31T23:30:00-02:00',
      'scans/example.com/2027/01/01/123e4567-e89b-12d3-a456-426614174000/',
    ],
    [
      'a single-digit month and day',
      '2026-01-05T00:00:00Z',
      'scans/example.com/2026/01/05/123e4567-e89b-12d3-a456-426614174000/',
    ],
  ])('uses %s', (_case, iso, expected) => {
    expect(scanOutputPrefix('example.com', new Date(iso), uuid)).toBe(expected);
  });

  it('normalises the domain and the UUID it is given', () => {
    // Act
    const prefix = scanOutputPrefix('Bücher.DE', new Date('2026-11-02T00:00:00Z'), uuid.toUpperCase());

    // Assess
    expect(prefix).toBe(`scans/xn--bcher-kva.de/2026/11/02/${uuid}/`);
  });

  it.each([
    ['domain', '../etc', new Date('2026-11-02T00:00:00Z'), uuid],
    ['startedAt', 'example.com', new Date('not a date'), uuid],
    ['scan_uuid', 'example.com', new Date('2026-11-02T00:00:00Z'), '../../x'],
  ])('rejects a bad %s instead of writing outside the prefix', (field, domain, date, scanUuid) => {
    // Act
    let error: unknown;
    try {
      scanOutputPrefix(domain, date, scanUuid);
    } catch (caught) {
      error = caught;
    }

    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).input).toBe(field);
  });
});
