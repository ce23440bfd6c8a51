import { describe, expect, it } from 'vitest';
import {
  containsEmail,
  fingerprintOf,
  holdsSecret,
  knownKeyCount,
  REDACTED,
  redactDeep,
  redactSecrets,
  redactText,
  redactUrl,
  redactVendorText,
  rememberKeyValue,
} from '#lambdas/platform/redaction/redact';

describe('redactUrl', () => {
  it('removes user-info and signature-like query values but keeps the path', () => {
    const out = redactUrl('https://user:pw@store.example/b/r.zip?X-Amz-Signature=abc&token=t&part=2');
    expect(out).toBe('https://store.example/b/r.zip?X-Amz-Signature=REDACTED&token=REDACTED&part=2');
  });

  it('does not throw on garbage', () => {
    expect(redactUrl('not a url')).toBe('[unparseable url]');
  });
});

describe('redactSecrets', () => {
  it('replaces every occurrence of each secret', () => {
    expect(redactSecrets('k=sk_abc123 again sk_abc123', ['sk_abc123'])).toBe('k=[REDACTED] again [REDACTED]');
  });
});

/** What must never survive: an address, a URL password, a key or token. */
const LEAK =
  /[A-Za-z0-9._%+-]+(?:@|%40)[A-Za-z0-9-]+\.[A-Za-z0-9.-]+|hunter2|s3cr3t-token|sk_live_[A-Za-z0-9]+/;

describe('redactText: adversarial vendor text', () => {
  it.each([
    [
      'a 4xx echoing the recon body',
      '{"error":"bad","request":{"emails":["bob.smith@example.org","b@x.co"]}}',
    ],
    ['a report name holding an address', 'report-for-bob.smith@example.org_20260101'],
    ['a percent-encoded address in a path', '/download/report-for-bob.smith%40example.org.zip'],
    ['a URL with user-info', 'see https://admin:hunter2@vendor.example/x'],
    ['user-info without a scheme', 'admin:hunter2@host'],
    ['a bearer token', 'Authorization: Bearer s3cr3t-token'],
    ['a key in JSON', '{"api_key": "s3cr3t-token"}'],
    ['a key in a query', 'GET /x?token=s3cr3t-token&page=2'],
    ['a vendor-style key', 'your key sk_live_abcdef123456 is invalid'],
    ['an echoed x-api-key header', '{"headers":{"x-api-key":"s3cr3t-token"}}'],
  ])('%s', (_what, text) => {
    const out = redactText(text);
    expect(out).not.toMatch(LEAK);
    expect(out).toContain(REDACTED);
    // Idempotent: a second pass changes nothing.
    expect(redactText(out)).toBe(out);
  });

  it('keeps what is not personal data or a credential', () => {
    const text = 'breach.recon failed with HTTP 422: name must be a string (a.example.com, 3 tokens)';
    expect(redactText(text)).toBe(text);
  });

  it('removes known secrets of any shape', () => {
    expect(redactText('key Zq9-x!', ['Zq9-x!'])).toBe(`key ${REDACTED}`);
  });

  it('redacts every string of a JSON value, keys included, without changing the input', () => {
    const raw = { status: 'success', output: 'r-bob@example.org', list: [{ 'x@y.io': 1 }], n: 3 };
    const out = redactDeep(raw);
    expect(JSON.stringify(out)).not.toMatch(LEAK);
    expect(out.n).toBe(3);
    expect(raw.output).toBe('r-bob@example.org');
  });

  it('finds an address in a name', () => {
    expect(containsEmail('Bob <bob@example.org>')).toBe(true);
    expect(containsEmail("Bob O'Neil")).toBe(false);
  });
});

describe('redactUrl: paths carry report names', () => {
  it('removes an address from the path', () => {
    expect(redactUrl('https://cdn.example/reports/r-bob%40example.org.zip?sig=1')).not.toMatch(LEAK);
  });
});

describe('redactText: hostile sizes', () => {
  // An unbounded repetition before a literal made redaction quadratic: 64 KiB of one of these took
  // 6-12 s, 1 MiB (a recon `output` the vendor may send) minutes. Bounded, 256 KiB takes well under
  // a second, so the test timeout (60 s) is a 100-fold margin, not a performance goal.
  it.each(['a', 'x.', 'a-', 'a%40', ',a:', '@a.', 'sk_', 'token='])(
    'redacts 256 KiB of %j repeated, in time linear in its length',
    (unit) => {
      const text = unit.repeat(Math.ceil((256 * 1024) / unit.length));
      expect(redactText(text).length).toBeGreaterThan(0);
    },
  );

  it('still finds the address at the end of a long run', () => {
    const text = `${'a'.repeat(100_000)} bob@example.org`;
    expect(redactText(text)).toBe(`${'a'.repeat(100_000)} ${REDACTED}`);
  });
});

/**
 * A key that looks like a plain word: no pattern could find it, only knowing it. Registered once for
 * the process (the registry outlives a test, as it outlives an invocation in a Lambda), so it is a
 * word no other test writes.
 */
const WORD_KEY = 'quillmarigoldtundra';

describe('the key values in use', () => {
  it('are removed wherever they appear once a client registers them, whatever they look like', () => {
    const text = `status ok; echo ${WORD_KEY} and ${WORD_KEY}-suffix`;
    expect(redactText(text)).toBe(text);
    rememberKeyValue(WORD_KEY);
    expect(redactText(text)).toBe(`status ok; echo ${REDACTED} and ${REDACTED}-suffix`);
    expect(redactDeep({ nested: [{ deep: `x${WORD_KEY}y` }] })).toEqual({
      nested: [{ deep: `x${REDACTED}y` }],
    });
  });

  it('are not taken when shorter than 8 characters (they would blank ordinary words)', () => {
    const before = knownKeyCount();
    rememberKeyValue('secret');
    expect(knownKeyCount()).toBe(before);
    expect(redactText('the secret is named')).toBe('the secret is named');
  });

  it('keep the key used last when many other values pass through (the least recently used go first)', () => {
    rememberKeyValue(WORD_KEY);
    for (let i = 0; i < 200; i++) {
      rememberKeyValue(`candidate-value-${i}`);
      // The key in use is registered again with every request it is sent on.
      if (i % 50 === 0) rememberKeyValue(WORD_KEY);
    }
    expect(knownKeyCount()).toBe(64);
    expect(redactText(`x ${WORD_KEY}`)).toBe(`x ${REDACTED}`);
    expect(redactText('candidate-value-0')).toBe('candidate-value-0');
  });

  it('are replaced longest first, so a key that contains another is not left half-shown', () => {
    expect(redactSecrets('abcd1234efgh', ['abcd', 'abcd1234efgh'])).toBe(REDACTED);
  });
});

describe('redactDeep: credential-named fields', () => {
  it.each(['api_key', 'x-api-key', 'X-Api-Key', 'authorization', 'token', 'secret', 'apiKey', 'password'])(
    'blanks the value of %s whatever it looks like',
    (field) => {
      expect(redactDeep({ headers: { [field]: 'plainwordvalue', other: 'plainwordvalue' } })).toEqual({
        headers: { [field]: REDACTED, other: 'plainwordvalue' },
      });
    },
  );

  it('keeps a credential-named object and redacts inside it', () => {
    expect(redactDeep({ token: { kind: 'bearer', value: 'Bearer abc.def' } })).toEqual({
      token: { kind: 'bearer', value: `Bearer ${REDACTED}` },
    });
  });
});

describe('redactVendorText: a body kept as text', () => {
  it('keeps a JSON body byte-for-byte but for what it replaces', () => {
    const body = '{ "status" : "running",\n  "echo": {"authorization": "Bearer abc123"} }';
    expect(redactVendorText(body)).toBe(
      `{ "status" : "running",\n  "echo": {"authorization": "Bearer ${REDACTED}"} }`,
    );
  });

  it('blanks a credential field text redaction cannot see, and the JSON still parses', () => {
    const body = '{"status":"running","request":{"headers":{"x-api-key":"plainwordvalue"}}}';
    const out = redactVendorText(body);
    expect(out).not.toContain('plainwordvalue');
    expect(JSON.parse(out)).toEqual({ status: 'running', request: { headers: { 'x-api-key': REDACTED } } });
  });

  it('stays valid JSON when a value holds an escaped quote', () => {
    const out = redactVendorText('{"token":"ab\\"cd","status":"done"}');
    expect(JSON.parse(out)).toEqual({ token: REDACTED, status: 'done' });
  });

  it('finds a registered key written with JSON escapes', () => {
    rememberKeyValue(WORD_KEY);
    const escaped = `{"echo":"${WORD_KEY.replace('q', '\\u0071')}"}`;
    const out = redactVendorText(escaped);
    expect(JSON.parse(out)).toEqual({ echo: REDACTED });
  });

  it('redacts a body that is not JSON as text', () => {
    expect(redactVendorText('status: running\nAuthorization: Bearer abc123')).toBe(
      `status: running\nAuthorization: Bearer ${REDACTED}`,
    );
  });
});

describe('holdsSecret and fingerprintOf', () => {
  it('tells a name holding a key or a credential shape from one holding an address', () => {
    rememberKeyValue(WORD_KEY);
    expect(holdsSecret(`rpt-${WORD_KEY}-2026`)).toBe(true);
    expect(holdsSecret('rpt-sk_live_abcdefgh1234')).toBe(true);
    expect(holdsSecret('report-for-bob@example.org')).toBe(false);
    expect(holdsSecret('rpt-2026-11-27')).toBe(false);
  });

  it('names a value by 16 hex digits of its SHA-256', () => {
    expect(fingerprintOf('abc')).toBe('sha256:ba7816bf8f01cfea');
  });
});
