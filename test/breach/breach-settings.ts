/**
 * The configuration the breach CDK tests synthesize (breach-workflow and watchlist-workflow): one
 * object, so both files get test/kit/synth.ts's one synthesis of it.
 */
import type { PipelineConfigInput } from '../../lib/config/schema.ts';

export const BREACH_SETTINGS: PipelineConfigInput = {
  vendor: { breachApiUrl: 'https://breach.vendor.example.net' },
  breach: { maxEmails: 20 },
};
