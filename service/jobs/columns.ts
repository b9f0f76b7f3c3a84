import { sql } from 'drizzle-orm';
import { jobs } from '../../db/schema';

/**
 * The only columns the API ever reads. Undisclosed salary and client/vendor names are nulled
 * inside the query, so they never leave the database; internal columns are not named at all.
 */
export const publicColumns = {
  id: jobs.id,
  postingId: jobs.postingId,
  title: jobs.title,
  department: jobs.department,
  location: jobs.location,
  workplace: jobs.workplace,
  state: jobs.state,
  type: jobs.type,
  description: jobs.description,
  requirements: jobs.requirements,
  responsibilities: jobs.responsibilities,
  salaryMin: sql<number | null>`case when ${jobs.salaryDisclosed} then ${jobs.salaryMin} end`.mapWith(Number),
  salaryMax: sql<number | null>`case when ${jobs.salaryDisclosed} then ${jobs.salaryMax} end`.mapWith(Number),
  salaryCurrency: sql<string | null>`case when ${jobs.salaryDisclosed} then ${jobs.salaryCurrency} end`,
  status: jobs.status,
  submissionDueDate: jobs.submissionDueDate,
  clientName: sql<string | null>`case when ${jobs.clientNameDisclosed} then ${jobs.clientName} end`,
  vendorName: sql<string | null>`case when ${jobs.vendorNameDisclosed} then ${jobs.vendorName} end`,
  postedByName: jobs.postedByName,
  createdAt: jobs.createdAt,
  updatedAt: jobs.updatedAt,
};

export interface PublicJobRow {
  id: string;
  postingId: string | null;
  title: string;
  department: string;
  location: string;
  workplace: 'on-site' | 'hybrid' | 'remote' | null;
  state: string | null;
  type: (typeof jobs.type.enumValues)[number];
  description: string;
  requirements: string[];
  responsibilities: string[];
  salaryMin: number | null;
  salaryMax: number | null;
  salaryCurrency: string | null;
  status: (typeof jobs.status.enumValues)[number];
  submissionDueDate: Date | null;
  clientName: string | null;
  vendorName: string | null;
  postedByName: string | null;
  createdAt: Date;
  updatedAt: Date | null;
}
