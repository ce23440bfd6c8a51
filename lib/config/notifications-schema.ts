/** The `notifications` section: who hears of alarms. */
import * as z from 'zod/mini';
import { describeValue, section, validated } from '#lambdas/platform/input/schema';
import { validateEmail } from '#lambdas/platform/input/validation';

export const notificationsSchema = section({
  /** Subscribed to the alarm topic; the address must confirm by email. @default none */
  email: z.optional(
    z.pipe(
      z.string({ error: (issue) => `must be an email address (got ${describeValue(issue.input)})` }),
      validated((value) => validateEmail(value, 'notifications.email')),
    ),
  ),
  /** Subscribed to the runs topic: one message per finished list or watchlist run. @default none */
  runsEmail: z.optional(
    z.pipe(
      z.string({ error: (issue) => `must be an email address (got ${describeValue(issue.input)})` }),
      validated((value) => validateEmail(value, 'notifications.runsEmail')),
    ),
  ),
});

export type NotificationsConfig = z.output<typeof notificationsSchema>;
