import * as z from 'zod/mini';

const s = z.object({ a: z.string(), b: z.optional(z.number().check(z.minimum(1))) });
export const handler = async (e: unknown) => s.parse(e);
