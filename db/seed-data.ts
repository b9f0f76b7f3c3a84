import type { NewJobRow } from './schema';
import { JOB_TYPES } from '../domain/job';
import { uuidv7 } from '../domain/uuid';

/** Realistic job rows, public and internal columns alike, from a seeded generator so the demo set is the same on every machine. */

// Consumer ids of kong.yaml's demo writers: their drafts are visible to them by id.
export const DEMO_WRITER_ID = '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a02';
export const DEMO_WRITER_2_ID = '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a03';

const DEPARTMENTS: Record<string, string[]> = {
  Engineering: [
    'Senior Backend Engineer',
    'Frontend Engineer',
    'Site Reliability Engineer',
    'QA Automation Engineer',
    'Engineering Manager',
  ],
  'Data & Analytics': ['Data Engineer', 'Analytics Engineer', 'Machine Learning Engineer', 'BI Developer'],
  Finance: ['Financial Analyst', 'Senior Accountant', 'Payroll Specialist', 'Controller'],
  Healthcare: ['Registered Nurse', 'Clinical Data Coordinator', 'Medical Coder'],
  Marketing: ['Content Strategist', 'Performance Marketing Manager', 'Product Marketing Manager'],
  Operations: ['Supply Chain Analyst', 'Operations Manager', 'Project Coordinator'],
  'Human Resources': ['HR Business Partner', 'Talent Acquisition Specialist'],
  Sales: ['Account Executive', 'Sales Development Representative', 'Solutions Consultant'],
};

const PLACES: Array<[string, string]> = [
  ['Austin', 'TX'],
  ['Denver', 'CO'],
  ['Chicago', 'IL'],
  ['Boston', 'MA'],
  ['Seattle', 'WA'],
  ['Atlanta', 'GA'],
  ['Raleigh', 'NC'],
  ['Phoenix', 'AZ'],
  ['Columbus', 'OH'],
  ['San Diego', 'CA'],
];
const CLIENTS = ['Northwind Health', 'Contoso Logistics', 'Fabrikam Bank', 'Tailspin Retail', 'Globex Energy'];
const VENDORS = ['BrightPath Staffing', 'Summit Talent Partners', 'Keystone Workforce'];
const RECRUITERS = ['Dana Whitfield', 'Marcus Lee', 'Priya Raman', 'Tom Okafor'];

const REQUIREMENTS = [
  '3+ years of relevant professional experience',
  'Clear written and spoken English',
  'Experience working with cross-functional teams',
  'Authorised to work in the United States',
  'Strong analytical and problem-solving skills',
  'Comfortable with ambiguity and changing priorities',
];
const RESPONSIBILITIES = [
  'Own deliverables from planning to release',
  'Collaborate with stakeholders to refine requirements',
  'Document processes and share knowledge with the team',
  'Report progress and risks to the hiring manager',
  'Mentor junior colleagues',
];

/** mulberry32: small, fast and good enough for demo data (and the property tests' draws). */
export function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const some = <T>(items: readonly T[], min: number): T[] =>
    items
      .filter(() => next() < 0.6)
      .concat(items.slice(0, min))
      .filter((v, i, all) => all.indexOf(v) === i);
  const int = (n: number): number => Math.floor(next() * n);
  return { next, int, pick, some };
}

type Status = NonNullable<NewJobRow['status']>;

export interface GenerateOptions {
  count: number;
  seed?: number;
  /** Newest createdAt; rows go back in time from here, one every `spacingMs`. */
  newest?: Date;
  spacingMs?: number;
  /** Fixes the status of row i; the default spreads all statuses. */
  statusFor?: (i: number) => Status;
  /** Offset for postingId numbering, so bulk batches do not repeat ids. */
  firstNumber?: number;
}

const STATUS_CYCLE: Status[] = ['active', 'open', 'active', 'paused', 'open', 'closed', 'active', 'draft'];

export function generateJobs(options: GenerateOptions): NewJobRow[] {
  const rnd = generator(options.seed ?? 42);
  const newest = options.newest ?? new Date();
  const spacing = options.spacingMs ?? 3 * 3600_000;
  const departments = Object.keys(DEPARTMENTS);
  const rows: NewJobRow[] = [];
  for (let i = 0; i < options.count; i++) {
    const number = (options.firstNumber ?? 0) + i;
    const department = departments[number % departments.length]!;
    const title = rnd.pick(DEPARTMENTS[department]!);
    const type = JOB_TYPES[number % JOB_TYPES.length]!;
    const status = options.statusFor ? options.statusFor(i) : STATUS_CYCLE[number % STATUS_CYCLE.length]!;
    const createdAt = new Date(newest.getTime() - i * spacing - Math.floor(rnd.next() * 1000));
    const remote = number % 7 === 3;
    const [city, state] = rnd.pick(PLACES);
    const salaryDisclosed = number % 3 !== 0;
    const min = 40_000 + Math.floor(rnd.next() * 80) * 1_000;
    const client = rnd.pick(CLIENTS);
    const vendor = type === 'managed-teams' || type === 'contract' ? rnd.pick(VENDORS) : null;
    const recruiter = rnd.pick(RECRUITERS);
    const payRate = 30 + Math.floor(rnd.next() * 90);
    rows.push({
      id: uuidv7(createdAt),
      postingId: number % 5 === 4 ? null : `JOB-${String(10_000 + number)}`,
      title,
      department,
      location: remote ? '' : `${city}, ${state}`,
      // The oldest fifth predates the workplace field: those rows have none.
      workplace: i >= options.count * 0.8 ? null : remote ? 'remote' : rnd.pick(['on-site', 'hybrid'] as const),
      state: remote ? null : state,
      type,
      description:
        `${title} in our ${department} practice. You will join a team that values ownership, ` +
        `clear communication and steady delivery. This ${type.replace(/-/g, ' ')} role ` +
        `${remote ? 'is fully remote' : `is based in ${city}`}.`,
      requirements: rnd.some(REQUIREMENTS, 2),
      responsibilities: rnd.some(RESPONSIBILITIES, 2),
      salaryDisclosed,
      salaryMin: min,
      salaryMax: min + 10_000 + Math.floor(rnd.next() * 40) * 1_000,
      salaryCurrency: 'USD',
      status,
      submissionDueDate: number % 4 === 0 ? null : new Date(createdAt.getTime() + 30 * 86_400_000),
      clientName: client,
      clientNameDisclosed: number % 2 === 0,
      vendorName: vendor,
      vendorNameDisclosed: vendor !== null && number % 4 === 1,
      postedByName: number % 6 === 5 ? null : recruiter,
      createdAt,
      updatedAt: number % 3 === 1 ? new Date(createdAt.getTime() + 86_400_000) : null,
      payRate,
      billRate: Math.round(payRate * 1.45),
      marginPct: 31.03,
      billingCode: `BC-${(number * 7919) % 100_000}`,
      recruiterId: `rec-${RECRUITERS.indexOf(recruiter) + 1}`,
      recruiterEmail: `${recruiter.split(' ')[0]!.toLowerCase()}@recruiting.example.com`,
      recruiterPhone: `+1-555-01${String(number % 100).padStart(2, '0')}`,
      clientContactName: `Hiring lead at ${client}`,
      clientContactEmail: `talent@${client.split(' ')[0]!.toLowerCase()}.example.com`,
      clientContactPhone: '+1-555-0199',
      vendorContactName: vendor ? `Account manager, ${vendor}` : null,
      vendorContactEmail: vendor ? `accounts@${vendor.split(' ')[0]!.toLowerCase()}.example.com` : null,
      internalNotes: `Margin approved by finance; do not share the bill rate with ${client}.`,
      createdByConsumer: status === 'draft' ? (number % 2 === 0 ? DEMO_WRITER_ID : DEMO_WRITER_2_ID) : null,
      deletedAt: number % 23 === 22 ? new Date(createdAt.getTime() + 2 * 86_400_000) : null,
    });
  }
  return rows;
}

/** The demo set loaded by `npm run db:seed` and by start-up on an empty table. */
export function demoJobs(now: Date = new Date()): NewJobRow[] {
  return generateJobs({ count: 64, seed: 2026, newest: now });
}
