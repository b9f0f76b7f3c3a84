import { defineConfig } from 'drizzle-kit';

// Only `npm run db:generate` reads this; the running service applies db/migrations itself.
export default defineConfig({
  dialect: 'mysql',
  schema: ['./db/schema.ts', './db/webhooks/schema.ts'],
  out: './db/migrations',
});
