import { defineConfig } from 'drizzle-kit';

// drizzle-kit writes plain SQL into migrations/; wrangler applies it (locally, remotely and in tests).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema.ts',
  out: './migrations',
});
