import { readFileSync } from 'node:fs';
import path from 'node:path';
import { COUNTED_UP_TO, FILTER_NAMES, LIST_FILTERS, type Filters } from '../../domain/list-filters';
import { LIST_QUERY } from '../jobs/contract/queries';
import { allowedParameters } from '../http/validate';
import { spoken } from '../webhooks/settings';
import type { WebhookSettings } from '../config';

/**
 * The guides partners read before the operations: docs/guides/*.md, in this order, read once at
 * start-up into the OpenAPI description (openapi.ts). The files are the only copy: the repository,
 * the reference page and docs/openapi.json show the same text.
 */
export const GUIDE_FILES = [
  'authentication.md',
  'scopes.md',
  'errors.md',
  'rate-limits.md',
  'pagination.md',
  'keeping-a-mirror.md',
  'webhooks.md',
  'idempotent-creates.md',
  'compression.md',
  'versioning.md',
] as const;

/** docs/guides/ from service/api/ (ts-jest) and from dist/service/api/ (compiled; the image copies docs/guides beside dist/). */
export const GUIDES_DIR = path.resolve(
  __dirname,
  __dirname.split(path.sep).includes('dist') ? '../../../docs/guides' : '../../docs/guides',
);

export interface Guide {
  file: string;
  /** The `## ` heading the file starts with. */
  title: string;
  text: string;
}

function readGuide(file: string): Guide {
  const text = readFileSync(path.join(GUIDES_DIR, file), 'utf8').trimEnd();
  const title = /^## (.+)\n/.exec(text)?.[1];
  // A guide without its heading would run into the one before it on the page.
  if (!title) throw new Error(`docs/guides/${file} must start with a "## " heading`);
  return { file, title, text };
}

export const GUIDES: readonly Guide[] = GUIDE_FILES.map(readGuide);

const code = (name: string) => `\`${name}\``;
const spokenList = (items: readonly string[]) =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

/** What the guides say of the listing's filters (domain/list-filters.ts) and its query (the "Allowed" list of its errors). */
const LIST_FACTS: Record<string, string> = {
  listParameters: allowedParameters(LIST_QUERY).join(', '),
  listFilters: spokenList(FILTER_NAMES.map(code)),
  listValued: spokenList((LIST_QUERY.lists ?? []).map(code)),
  countedFilters: spokenList(FILTER_NAMES.filter((name) => (LIST_FILTERS as Filters)[name]!.counted).map(code)),
  countedUpTo: COUNTED_UP_TO.toLocaleString('en-US'),
};

const FACT = /<!--fact:(\w+)-->(.*?)<!--\/fact-->/g;

/** A guide's text with each `<!--fact:name-->default<!--/fact-->` stated as the settings have it (the file shows the default). */
export function withFacts(text: string, webhooks: WebhookSettings): string {
  const facts: Record<string, string> = {
    subscriptionLimit: String(webhooks.subscriptionLimit),
    deliveryTimeout: spoken(webhooks.timeoutMs),
    giveUpAfter: spoken(webhooks.retry.giveUpAfterMs),
    ...LIST_FACTS,
  };
  return text.replace(FACT, (_marked, name: string) => {
    const fact = facts[name];
    if (fact === undefined) throw new Error(`docs/guides: unknown fact "${name}"`);
    return fact;
  });
}
