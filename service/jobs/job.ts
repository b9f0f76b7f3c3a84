import { z } from 'zod';
import { JOB_STATUSES, JOB_TYPES, WORKPLACES } from '../../db/schema';

/** The spec's Job object, field for field and in the spec's order. */
export const Salary = z.object({
  min: z.number().nullable(),
  max: z.number().nullable(),
  currency: z.string().regex(/^[A-Z]{3}$/),
});
export type Salary = z.infer<typeof Salary>;

export const Job = z.strictObject({
  id: z.uuid(),
  postingId: z.string().nullable(),
  title: z.string(),
  department: z.string(),
  location: z.string(),
  workplace: z.enum(WORKPLACES).optional(),
  state: z.string().nullable(),
  type: z.enum(JOB_TYPES),
  description: z.string(),
  requirements: z.array(z.string()),
  responsibilities: z.array(z.string()),
  salary: Salary.nullable(),
  status: z.enum(JOB_STATUSES),
  submissionDueDate: z.iso.datetime().nullable(),
  clientName: z.string().nullable(),
  vendorName: z.string().nullable(),
  postedByName: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime().nullable(),
});
export type Job = z.infer<typeof Job>;
