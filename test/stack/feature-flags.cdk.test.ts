/**
 * `npx cdk synth --quiet` stays quiet: cdk.json sets every feature flag aws-cdk-lib recommends for
 * a new app (the CDK CLI otherwise prints a notice counting the unconfigured ones), and the README
 * and docs/deploying.md deploy with the quiet form. No synth needed: both are files.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const cdkJson = JSON.parse(readFileSync(new URL('cdk.json', root), 'utf8')) as {
  context: Record<string, unknown>;
};
const recommended = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('aws-cdk-lib/recommended-feature-flags.json'), 'utf8'),
) as Record<string, unknown>;

describe('feature flags', () => {
  it('cdk.json sets every recommended flag to its recommended value', () => {
    const unset = Object.keys(recommended).filter((flag) => !(flag in cdkJson.context));
    expect(unset).toEqual([]);
    const differing = Object.entries(recommended).filter(
      ([flag, value]) => JSON.stringify(cdkJson.context[flag]) !== JSON.stringify(value),
    );
    expect(differing).toEqual([]);
  });

  it("the README's and docs/deploying.md's synth commands use the quiet form", () => {
    const readme = ['README.md', 'docs/deploying.md']
      .map((page) => readFileSync(new URL(page, root), 'utf8'))
      .join('\n');
    const synths = [...readme.matchAll(/`(?:npm ci && )?npx cdk synth[^`]*`/g)].map((match) => match[0]);
    expect(synths.length).toBeGreaterThan(0);
    for (const synth of synths) expect(synth).toContain('--quiet');
  });
});
