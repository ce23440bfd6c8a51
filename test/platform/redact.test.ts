import { describe, expect, it } from 'vitest';
import {
  containsEmail,
  REDACTED,
  redactDeep,
  redactSecrets,
  redactText,
  redactUrl,
} from '#lambdas/platform/redact';

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
