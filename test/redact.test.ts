import { describe, expect, it } from 'vitest';
import { redactSecrets, redactUrl } from '#core/redact';

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
