/**
 * The domain-list schedules as the platform's ScheduledRuns takes them: each configured schedule
 * with the list it scans resolved, a named list object in the input bucket or inline domains.
 */
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { DomainListDefinition, ScheduleConfig } from '../../config/schema.ts';
import type { ScheduledRun } from '../../platform/scheduled-runs.ts';

/** What a domain-list schedule fire starts (descriptions and the dead-letter queue's purpose). */
export const DOMAIN_LIST_RUNS = 'scan domain list';

export function domainListSchedules(
  schedules: readonly ScheduleConfig[],
  domainLists: Readonly<Record<string, DomainListDefinition>>,
  inputBucket: IBucket,
): ScheduledRun[] {
  return schedules.map(({ domainList, domains, ...timing }) => {
    if (domainList === undefined) {
      return { ...timing, input: { domains: domains ?? [] }, inputLabel: 'inline domains' };
    }
    const list = domainLists[domainList];
    if (list === undefined)
      throw new Error(`schedule '${timing.name}' refers to unknown domain list '${domainList}'`);
    const input =
      'objectKey' in list
        ? { bucket: inputBucket.bucketName, key: list.objectKey }
        : { domains: list.domains };
    return { ...timing, input, inputLabel: domainList };
  });
}
