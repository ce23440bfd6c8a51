/**
 * A line of a domain list is quoted back in rejects.json, summary.json and summary.txt when it is
 * refused. A line may hold a URL password or an address: what is quoted is redacted first.
 */
import { describe, expect, it } from 'vitest';
import { parseDomainListText } from '#lambdas/domain-list/domain-list';

const LEAK = /hunter2|bob(?:@|%40)|:pass@|p%40ss/;

describe('refused lines are quoted redacted', () => {
  it.each([
    ['a URL with user and password', 'https://user:hunter2@host.example/'],
    ["the brief's own example", 'https://user:pass@host/'],
    ['user-info without a scheme', 'admin:hunter2@host.example'],
    ['an address', 'bob@example.org'],
    ['an address in CSV with a comment', '"bob@example.org",owner # vip'],
    ['a password with an encoded @', 'https://u:p%40ss@host.example/'],
  ])('%s', (_what, line) => {
    const parsed = parseDomainListText(`good.example.com\n${line}\n`);

    expect(parsed.domains.map((d) => d.domain)).toEqual(['good.example.com']);
    expect(parsed.invalid).toHaveLength(1);
    expect(parsed.invalid[0]?.line).toBe(2);
    expect(parsed.invalid[0]?.text).not.toMatch(LEAK);
    expect(parsed.invalid[0]?.reason).not.toMatch(LEAK);
  });

  it('keeps a harmless refused line as it was', () => {
    const parsed = parseDomainListText('not a domain!\n');
    expect(parsed.invalid[0]?.text).toBe('not a domain!');
  });
});
