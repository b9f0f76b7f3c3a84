import type { z } from 'zod';
import type { Route } from '../http/route';
import type { WebhookSettings } from '../config';

/** The settings every route and the document are given: each feature reads its own. */
export interface ApiSettings {
  webhooks: WebhookSettings;
  /** The gateway's public address (PUBLIC_URL), listed first in the document's servers. */
  publicUrl?: string;
}

/** A route of this API: given the database and ApiSettings at mount. */
export type ApiRoute = Route<z.ZodObject, z.ZodObject, z.ZodObject, ApiSettings>;
