import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#lambdas/platform/errors';
import {
  checkAllowedSpecialUse,
  normalizeDomain,
  validateEmail,
  validateReportName,
  validateScanUuid,
} from '#lambdas/platform/validation';
import { thrownBy } from '../helpers/errors.ts';

const label63 = 'a'.repeat(63);
/** 4 x 63 + 3 dots = 255 characters. */
const domain255 = [label63, label63, label63, label63].join('.');
/** 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 characters, the longest allowed. */
const domain253 = [label63, label63, label63, 'b'.repeat(61)].join('.');

describe('normalizeDomain', () => {
  const good: [string, string][] = [
    ['example.com', 'example.com'],
    ['Example.COM', 'example.com'],
    ['  example.com\t', 'example.com'],
    ['example.com.', 'example.com'],
    ['example.com/', 'example.com'],
    ['sub.domain.example.co.uk', 'sub.domain.example.co.uk'],
    ['123.example.com', '123.example.com'],
    ['1password.com', '1password.com'],
    ['a-b--c.example.com', 'a-b--c.example.com'],
    [`${label63}.com`, `${label63}.com`],
    [domain253, domain253],
    ['https://Example.COM:8443/path?q', 'example.com'],
    ['http://example.com', 'example.com'],
    ['HTTPS://WWW.EXAMPLE.COM/#top', 'www.example.com'],
    ['https://example.com./', 'example.com'],
    ['http://example.com:80', 'example.com'],
    ['https://example.com?x=1', 'example.com'],
    ['https://ex%61mple.com/', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['BÜCHER.DE', 'xn--bcher-kva.de'],
    ['https://bücher.de/pfad', 'xn--bcher-kva.de'],
    ['例え.テスト', 'xn--r8jz45g.xn--zckzah'],
    ['пример.рф', 'xn--e1afmkfd.xn--p1ai'],
    ['münchen\u3002de', 'xn--mnchen-3ya.de'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['ＥＸＡＭＰＬＥ.com', 'example.com'],
  ];

  it.each(good)('accepts %j as %j', (input, expected) => {
    // Act
    const result = normalizeDomain(input);

    // Assess
    expect(result).toBe(expected);
  });

  const bad: [string, string, string][] = [
    ['empty', '', 'is empty'],
    ['whitespace only', '   ', 'is empty'],
    ['tabs and newlines only', '\t\r\n', 'is empty'],
    ['space inside', 'exa mple.com', 'contains a space'],
    ['no-break space inside', 'exa\u00a0mple.com', 'contains a space'],
    ['C0 control inside', 'exa\u0007mple.com', 'contains a control character'],
    ['C1 control inside', 'exa\u0085mple.com', 'contains a control character'],
    ['DEL inside', 'exa\u007fmple.com', 'contains a control character'],
    ['IPv4', '127.0.0.1', 'is an IP address'],
    ['IPv4 as one integer', '2130706433', 'is an IP address'],
    ['IPv4 as hex integer', '0x7f000001', 'is an IP address'],
    ['IPv4 short form', '127.1', 'is an IP address'],
    ['IPv4 octal form', '0177.0.0.1', 'is an IP address'],
    ['IPv6 loopback', '::1', 'is an IP address'],
    ['IPv6', '2001:db8::1', 'is an IP address'],
    ['bracketed IPv6', '[2001:db8::1]', 'is an IP address'],
    ['IPv4 in a URL', 'https://127.0.0.1/', 'is an IP address'],
    ['IPv6 in a URL', 'http://[::1]:8080/', 'is an IP address'],
    ['integer IPv4 in a URL', 'http://2130706433/', 'is an IP address'],
    ['wildcard', '*.example.com', 'contains a wildcard'],
    ['wildcard in a URL', 'https://*.example.com/', 'contains a wildcard'],
    ['path without scheme', 'example.com/path', 'contains a path'],
    ['scheme-relative URL', '//example.com', 'contains a path'],
    ['query without scheme', 'example.com?q=1', 'contains a query string'],
    ['fragment without scheme', 'example.com#top', 'contains a fragment'],
    ['user info without scheme', 'user@example.com', "contains '@'"],
    ['user info in a URL', 'https://user:secret@example.com/', 'user information'],
    ['port without scheme', 'example.com:8080', 'contains a port'],
    ['scheme without slashes', 'http:example.com', 'is not a domain or an http(s):// URL'],
    ['unsupported scheme', 'ftp://example.com', "unsupported scheme 'ftp'"],
    ['URL without host', 'https://', 'without a host'],
    ['URL with a bad port', 'https://example.com:99999/', 'invalid port'],
    ['localhost', 'localhost', "single-label name ('localhost')"],
    ['single label', 'intranet', 'single-label name'],
    ['underscore', 'exa_mple.com', 'contains an underscore'],
    ['underscore label', '_dmarc.example.com', 'contains an underscore'],
    ['consecutive dots', 'example..com', 'label 2 is empty'],
    ['leading dot', '.example.com', 'label 1 is empty'],
    ['two trailing dots', 'example.com..', 'label 3 is empty'],
    ['leading hyphen', '-example.com', "label '-example' starts with a hyphen"],
    ['trailing hyphen', 'example-.com', "label 'example-' ends with a hyphen"],
    ['leading hyphen in an IDN label', '-bücher.de', "label '-bücher' starts with a hyphen"],
    ['label of 64 characters', `${'a'.repeat(64)}.com`, 'is longer than 63 characters'],
    ['name of 255 characters', domain255, 'is longer than 253 characters'],
    ['huge input', 'a'.repeat(5000), 'is longer than 2048 characters'],
    ['all-numeric TLD', 'example.123', "all-numeric top-level label '123'"],
    ['all-numeric TLD after an IDN label', 'ü.123', 'all-numeric top-level label'],
    ['five numeric labels', '1.2.3.4.5', 'all-numeric top-level label'],
    ['TLD starting with a digit', 'example.1com', 'does not start with a letter'],
    ['punctuation', 'exa!mple.com', 'contains "!", which is not allowed'],
    ['invalid punycode', 'xn--zz.com', 'is not valid punycode'],
    [
      'A-label of a plain ASCII label',
      'xn--example-.com',
      "label 'xn--example-' is punycode for a plain ASCII label",
    ],
    ['A-label hiding a trailing hyphen', 'xn--bcher-kva-.de', 'is punycode for a plain ASCII label'],
    ['localhost', 'localhost', 'single-label'],
    ['a localhost subdomain', 'app.localhost', "special-use name ('app.localhost') that is never scanned"],
    ['cloud metadata', 'metadata.google.internal', 'never scanned'],
    ['a .local name', 'printer.local', "special-use top-level domain '.local'"],
    ['an .internal name', 'db.corp.internal', "'.internal'"],
    ['an .invalid name', 'x.invalid', "'.invalid'"],
    ['a .test name', 'lab.test', "'.test'"],
    ['an .example name', 'shop.example', "'.example'"],
    ['a special-use URL host', 'https://printer.local:8080/', "'.local'"],
    ['zero-width joiner', 'exa\u200dmple.com', 'is not a valid internationalized label'],
  ];

  it.each(bad)('rejects %s', (_case, input, reason) => {
    // Act
    const error = thrownBy(InvalidInputError, () => normalizeDomain(input, 'domains.txt line 7'));

    // Assess
    expect(error.name).toBe('InvalidInputError');
    expect(error.input).toBe('domains.txt line 7');
    expect(error.reason).toContain(reason);
    expect(error.message).toBe(`Invalid domains.txt line 7: ${error.reason}`);
  });

  it('has at least 30 rejection and 15 acceptance cases', () => {
    expect(bad.length).toBeGreaterThanOrEqual(30);
    expect(good.length).toBeGreaterThanOrEqual(15);
  });

  it('never echoes a URL password in the error', () => {
    // Act
    const error = thrownBy(InvalidInputError, () => normalizeDomain('https://admin:hunter2@example.com/'));

    // Assess
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('admin');
  });

  it("names the input 'domain' by default", () => {
    expect(thrownBy(InvalidInputError, () => normalizeDomain('localhost')).input).toBe('domain');
  });

  it('is idempotent on its own output', () => {
    for (const [input] of good) {
      const once = normalizeDomain(input);
      expect(normalizeDomain(once)).toBe(once);
    }
  });

  it('rejects a non-string with a reason instead of crashing', () => {
    expect(thrownBy(InvalidInputError, () => normalizeDomain(42 as unknown as string)).reason).toBe(
      'must be a string',
    );
  });
});

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

describe('validateScanUuid', () => {
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
    expect(validateScanUuid(input)).toBe(expected);
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
    const error = thrownBy(InvalidInputError, () => validateScanUuid(input, 'scanUuid'));

    // Assess
    expect(error.input).toBe('scanUuid');
    expect(error.reason).toContain(reason);
  });

  it('rejects a non-string', () => {
    expect(thrownBy(InvalidInputError, () => validateScanUuid(undefined as unknown as string)).reason).toBe(
      'must be a string',
    );
  });
});

describe('normalizeDomain with allowed special-use suffixes', () => {
  it('accepts a special-use suffix that configuration allows', () => {
    expect(normalizeDomain('Lab.Test', 'domain', { allowSpecialUse: ['test'] })).toBe('lab.test');
  });

  it.each(['app.localhost', 'metadata.google.internal'])(
    'refuses %s even when its suffix is allowed',
    (input) => {
      // Act
      const error = thrownBy(InvalidInputError, () =>
        normalizeDomain(input, 'domain', { allowSpecialUse: ['internal', 'test'] }),
      );

      // Assess
      expect(error.reason).toContain('never scanned');
    },
  );

  it('keeps refusing suffixes that are not allowed', () => {
    expect(() => normalizeDomain('printer.local', 'domain', { allowSpecialUse: ['test'] })).toThrow(
      "special-use top-level domain '.local'",
    );
  });

  it('keeps example.com, example.org and example.net valid', () => {
    expect(['example.com', 'example.org', 'example.net'].map((d) => normalizeDomain(d))).toEqual([
      'example.com',
      'example.org',
      'example.net',
    ]);
  });
});

describe('checkAllowedSpecialUse', () => {
  it('normalises known suffixes', () => {
    expect(checkAllowedSpecialUse(['TEST', '.local'], 'scan.allowSpecialUseDomains')).toEqual([
      'test',
      'local',
    ]);
  });

  it.each([['localhost'], ['com'], [42]])('refuses %s, naming the entry', (value) => {
    // Act
    const error = thrownBy(InvalidInputError, () =>
      checkAllowedSpecialUse([value], 'scan.allowSpecialUseDomains'),
    );

    // Assess
    expect(error.input).toBe('scan.allowSpecialUseDomains[0]');
    expect(error.reason).toContain('must be one of local, internal, invalid, test, example');
  });
});
