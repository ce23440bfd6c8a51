/** Validation of the other identifiers the pipeline takes: email addresses, report names and scan UUIDs. */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#lambdas/platform/errors';
import { validateEmail, validateReportName, validateUuid } from '#lambdas/platform/input/validation';
import { thrownBy } from '../kit/errors.ts';

const label63 = 'a'.repeat(63);
/** 4 x 63 + 3 dots = 255 characters. */
const domain255 = [label63, label63, label63, label63].join('.');

describe('validateEmail', () => {
  const local64 = 'l'.repeat(64);
  // 63 + 1 + 63 + 1 + 57 + 4 = 189, so local64 + '@' + domain189 is exactly 254 characters.
  const domain189 = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
  const domain190 = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`;

  const good: [string, string][] = [
    ['alice@example.com', 'alice@example.com'],
    ['  alice@example.com  ', 'alice@example.com'],
    ['Alice.Smith@Example.COM', 'Alice.Smith@example.com'],
    ['alice+tag@example.com', 'alice+tag@example.com'],
    ["o'brien@example.ie", "o'brien@example.ie"],
    ['a@example.com', 'a@example.com'],
    ['first.last@sub.example.co.uk', 'first.last@sub.example.co.uk'],
    ['user_name@example.com', 'user_name@example.com'],
    ['1234567890@example.com', '1234567890@example.com'],
    ['x-y@example-domain.com', 'x-y@example-domain.com'],
    ["!#$%&'*+-/=?^_`{|}~@example.org", "!#$%&'*+-/=?^_`{|}~@example.org"],
    ['mueller@bücher.de', 'mueller@xn--bcher-kva.de'],
    ['user@例え.テスト', 'user@xn--r8jz45g.xn--zckzah'],
    ['user@example.com.', 'user@example.com'],
    ['user@xn--bcher-kva.de', 'user@xn--bcher-kva.de'],
    [`${local64}@example.com`, `${local64}@example.com`],
    [`${local64}@${domain189}`, `${local64}@${domain189}`],
  ];

  it.each(good)('accepts %j as %j', (input, expected) => {
    // Act
    const result = validateEmail(input);

    // Assess
    expect(result).toBe(expected);
  });

  const bad: [string, string, string][] = [
    ['empty', '', 'is empty'],
    ['whitespace only', '   ', 'is empty'],
    ['no @', 'alice.example.com', "has no '@'"],
    ['two @ in a row', 'alice@@example.com', "more than one '@'"],
    ['two @ apart', 'alice@bob@example.com', "more than one '@'"],
    ['empty local part', '@example.com', 'local part is empty'],
    ['empty domain part', 'alice@', 'domain part is empty'],
    [
      'local part of 65 characters',
      `${'a'.repeat(65)}@example.com`,
      'local part is longer than 64 characters',
    ],
    ['leading dot', '.alice@example.com', 'local part starts with a dot'],
    ['trailing dot', 'alice.@example.com', 'local part ends with a dot'],
    ['double dot', 'al..ice@example.com', 'local part contains consecutive dots'],
    ['space', 'al ice@example.com', 'contains a space'],
    ['no-break space', 'alice@exa\u00a0mple.com', 'contains a space'],
    ['quoted local part', '"alice"@example.com', 'quoted local parts are not accepted'],
    ['control character', 'alice\u0001@example.com', 'contains a control character'],
    ['non-ASCII local part', 'alïce@example.com', 'local part contains a non-ASCII character'],
    ['parenthesis comment', 'ali(ce)@example.com', 'local part contains "("'],
    ['comma', 'alice,bob@example.com', 'local part contains ","'],
    ['angle brackets', 'Alice <alice@example.com>', 'contains a space'],
    ['angle bracket without space', 'alice<x>@example.com', 'local part contains "<"'],
    ['mailto prefix', 'mailto:alice@example.com', 'local part contains ":"'],
    ['single-label domain', 'alice@localhost', 'domain part is a single-label name'],
    ['IP address domain', 'alice@127.0.0.1', 'domain part is an IP address'],
    ['address literal', 'alice@[127.0.0.1]', 'domain part is an address literal'],
    ['underscore in domain', 'alice@exa_mple.com', 'domain part contains an underscore'],
    ['empty domain label', 'alice@example..com', 'domain part label 2 is empty'],
    ['leading hyphen in domain', 'alice@-example.com', 'domain part label 1 starts with a hyphen'],
    ['trailing hyphen in domain', 'alice@example.com-', 'domain part label 2 ends with a hyphen'],
    ['wildcard domain', 'alice@*.example.com', 'domain part contains a wildcard'],
    ['path in domain', 'alice@example.com/path', 'domain part label 2 contains "/"'],
    ['port in domain', 'alice@example.com:25', 'domain part label 2 contains ":"'],
    ['numeric TLD', 'alice@example.123', 'domain part has an all-numeric top-level label'],
    ['domain over 253', `alice@${domain255}`, 'domain part is longer than 253 characters'],
    ['address over 254', `${local64}@${domain190}`, 'is longer than 254 characters'],
    [
      'bad IDN label',
      'alice@exa\u200dmple.com',
      'domain part label 1 is not a valid internationalized label',
    ],
  ];

  it.each(bad)('rejects %s without revealing the address', (_case, input, reason) => {
    // Act
    const error = thrownBy(InvalidInputError, () => validateEmail(input, 'emails[2]'));

    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.input).toBe('emails[2]');
    expect(error.reason).toContain(reason);
    expect(error.message.startsWith('Invalid emails[2]: ')).toBe(true);
    const address = input.trim();
    if (address !== '') expect(error.message).not.toContain(address);
    // Neither half may leak either (short halves like "a" would match ordinary words, so skip those).
    const at = address.indexOf('@');
    for (const part of at === -1 ? [address] : [address.slice(0, at), address.slice(at + 1)]) {
      if (part.length >= 5) expect(error.message).not.toContain(part);
    }
  });

  it('has at least 30 rejection and 15 acceptance cases', () => {
    expect(bad.length).toBeGreaterThanOrEqual(30);
    expect(good.length).toBeGreaterThanOrEqual(15);
  });

  it("names the input 'email' by default", () => {
    expect(thrownBy(InvalidInputError, () => validateEmail('nobody')).input).toBe('email');
  });
});

describe('validateReportName', () => {
  const good: [string, string][] = [
    ['simple', 'report-2026'],
    ['spaces', 'Alice Smith'],
    ['unicode', 'Jürgen Müller 2026-01'],
    ['CJK', '日本語レポート'],
    ['dots inside', 'a.b.c'],
    ['three dots', '...'],
    ['dotfile-like', '.hidden'],
    ['URL-special characters', 'name with %20 and ?#&+='],
    ['leading space kept as is', ' leading space'],
    ['255 ASCII characters', 'x'.repeat(255)],
    ['255 emoji (510 UTF-16 units)', '😀'.repeat(255)],
  ];

  it.each(good)('accepts a name with %s unchanged', (_case, input) => {
    expect(validateReportName(input)).toBe(input);
  });

  const bad: [string, string, string][] = [
    ['empty', '', 'is empty'],
    ['spaces only', '   ', 'is only whitespace'],
    ['tab only', '\t', 'is only whitespace'],
    ['dot', '.', "must not be '.' or '..'"],
    ['dot dot', '..', "must not be '.' or '..'"],
    ['slash', 'a/b', "contains '/'"],
    ['parent segment', '../etc/passwd', "contains '/'"],
    ['only a slash', '/', "contains '/'"],
    ['backslash', 'a\\b', "contains '\\'"],
    ['backslash parent segment', '..\\x', "contains '\\'"],
    ['NUL', 'a\u0000b', 'contains a control character'],
    ['newline', 'a\nb', 'contains a control character'],
    ['DEL', 'a\u007fb', 'contains a control character'],
    ['C1 control', 'a\u0085b', 'contains a control character'],
    ['CSI', 'a\u009bb', 'contains a control character'],
    ['unpaired surrogate', 'a\ud800b', 'contains an unpaired surrogate'],
    ['256 characters', 'x'.repeat(256), 'is longer than 255 characters'],
    ['256 non-ASCII characters', 'ü'.repeat(256), 'is longer than 255 characters'],
  ];

  it.each(bad)('rejects a name that is %s', (_case, input, reason) => {
    // Act
    const error = thrownBy(InvalidInputError, () => validateReportName(input, 'reportName'));

    // Assess
    expect(error.input).toBe('reportName');
    expect(error.reason).toContain(reason);
  });

  it("names the input 'report_name' by default", () => {
    expect(thrownBy(InvalidInputError, () => validateReportName('')).input).toBe('report_name');
  });
});

describe('validateUuid', () => {
  const good: [string, string][] = [
    ['123e4567-e89b-12d3-a456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
    ['123E4567-E89B-12D3-A456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
    ['  123e4567-e89b-12d3-a456-426614174000\n', '123e4567-e89b-12d3-a456-426614174000'],
    ['00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000'],
    ['ffffffff-ffff-ffff-ffff-ffffffffffff', 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
    ['01890a5d-ac96-774b-bcce-b302099a8057', '01890a5d-ac96-774b-bcce-b302099a8057'],
    ['f47ac10b-58cc-4372-a567-0e02b2c3d479', 'f47ac10b-58cc-4372-a567-0e02b2c3d479'],
  ];

  it.each(good)('accepts %j as %j', (input, expected) => {
    expect(validateUuid(input, 'scan_uuid')).toBe(expected);
  });

  const bad: [string, string, string][] = [
    ['empty', '', 'is empty'],
    ['whitespace', '   ', 'is empty'],
    ['a word', 'not-a-uuid', 'is not a UUID'],
    ['no dashes', '123e4567e89b12d3a456426614174000', 'is not a UUID'],
    ['braces', '{123e4567-e89b-12d3-a456-426614174000}', 'is not a UUID'],
    ['URN form', 'urn:uuid:123e4567-e89b-12d3-a456-426614174000', 'is not a UUID'],
    ['one digit short', '123e4567-e89b-12d3-a456-42661417400', 'is not a UUID'],
    ['one digit long', '123e4567-e89b-12d3-a456-4266141740000', 'is not a UUID'],
    ['non-hex digit', 'g23e4567-e89b-12d3-a456-426614174000', 'is not a UUID'],
    ['underscore separator', '123e4567-e89b-12d3-a456_426614174000', 'is not a UUID'],
    ['path suffix', '123e4567-e89b-12d3-a456-426614174000/../x', 'is not a UUID'],
    ['path prefix', '../123e4567-e89b-12d3-a456-426614174000', 'is not a UUID'],
    ['spaces as separators', '123e4567 e89b 12d3 a456 426614174000', 'is not a UUID'],
    ['inner newline', '123e4567-e89b-12d3-a456-4266\n14174000', 'is not a UUID'],
  ];

  it.each(bad)('rejects %s', (_case, input, reason) => {
    // Act
    const error = thrownBy(InvalidInputError, () => validateUuid(input, 'scanUuid'));

    // Assess
    expect(error.input).toBe('scanUuid');
    expect(error.reason).toContain(reason);
  });

  it('rejects a non-string', () => {
    expect(
      thrownBy(InvalidInputError, () => validateUuid(undefined as unknown as string, 'scan_uuid')).reason,
    ).toBe('must be a string');
  });
});
