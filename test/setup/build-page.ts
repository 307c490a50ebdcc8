import { buildPage } from '../../scripts/build-page';

/**
 * Global setup for both projects: the Workers pool serves dist/page as the Worker's static assets
 * (wrangler.toml [assets]) but does not run wrangler's [build] command, so the pages (room, admin) are built here.
 */
export default async function setup(): Promise<void> {
  await buildPage();
}
