/** The smallest body POST /api/v1/jobs accepts: the four required fields, nothing else. */
export const MINIMAL_JOB = {
  title: 'Senior Data Engineer',
  department: 'Data & Analytics',
  type: 'contract-to-hire',
  description: 'Build and run our pipelines.',
} as const;
